import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { forgetTool, recallTool, rememberTool } from '../../src/tools/builtins/memory.js';
import { memoriesSection } from '../../src/tools/builtins/memory-section.js';
import { scratchpadSection, updateScratchpadTool } from '../../src/tools/builtins/scratchpad.js';
import { writeTodosTool } from '../../src/tools/builtins/todos.js';
import { ftsQuery } from '../../src/tools/memory-store.js';
import { makeContext, type TestContext } from './context.js';

let ctx: TestContext;
beforeEach(async () => {
  ctx = await makeContext();
});
afterEach(async () => {
  await ctx.close();
});

async function addMessage(conversationId: string, role: 'user' | 'assistant' | 'tool', content: string) {
  await ctx.db
    .insertInto('messages')
    .values({
      conversation_id: conversationId,
      turn_id: null,
      role,
      content,
      tool_calls: null,
      tool_call_id: null,
      author_id: null,
      created_at: Date.now(),
    })
    .execute();
}

async function addConversation(id: string, chatKey: string) {
  const now = Date.now();
  await ctx.db
    .insertInto('conversations')
    .values({
      id,
      channel: 'console',
      chat_key: chatKey,
      thread_key: '',
      owner_id: null,
      model: null,
      scratchpad: null,
      archived: 1,
      created_at: now,
      updated_at: now,
    })
    .execute();
}

describe('remember / recall / forget', () => {
  it('saves, updates, lists, searches and forgets memories', async () => {
    expect((await ctx.run(rememberTool, { key: 'user_name', value: 'Ada Lovelace' })).output).toBe(
      'Saved memory "user_name".',
    );
    await ctx.run(rememberTool, { key: 'deploy', value: 'Deploys run from the release branch on Fridays' });
    expect((await ctx.run(rememberTool, { key: 'user_name', value: 'Ada King' })).output).toBe(
      'Updated memory "user_name".',
    );
    const all = await ctx.run(recallTool, {});
    expect(all.output).toContain('- user_name: Ada King');
    expect(all.output).toContain('- deploy: Deploys run');
    const hit = await ctx.run(recallTool, { query: 'deploying friday' });
    expect(hit.output).toContain('- deploy: Deploys run from the release branch on Fridays');
    expect(hit.output).not.toContain('Ada');
    // The updated value is indexed, the old one is gone.
    expect((await ctx.run(recallTool, { query: 'Lovelace' })).output).toContain('Nothing found');
    expect((await ctx.run(recallTool, { query: 'King' })).output).toContain('user_name: Ada King');
    expect((await ctx.run(forgetTool, { key: 'user_name' })).output).toBe('Forgot "user_name".');
    const again = await ctx.run(forgetTool, { key: 'user_name' });
    expect(again.status).toBe('failed');
    expect((await ctx.run(recallTool, { query: 'King' })).output).toContain('Nothing found');
  });

  it('never lets query text break FTS5 syntax', async () => {
    await ctx.run(rememberTool, { key: 'quote', value: 'She said "hello world" (twice) near the NEAR sign*' });
    for (const q of [
      '"',
      '"hello',
      'hello"world',
      '*',
      'hel*',
      'NEAR',
      'NEAR(hello world)',
      '(',
      'hello)',
      'AND OR NOT',
      '-hello',
      'key:value',
      '^start',
      "'; DROP TABLE memories; --",
    ]) {
      const r = await ctx.run(recallTool, { query: q });
      expect(r.output, q).not.toMatch(/syntax error|fts5|SqliteError/i);
      if (r.status === 'failed') expect(r.output, q).toContain('no words to search for');
    }
    expect((await ctx.run(recallTool, { query: 'NEAR(hello world)' })).output).toContain('- quote:');
    expect((await ctx.run(recallTool, { query: '"hello' })).output).toContain('- quote:');
    expect(ftsQuery('a "b" NEAR(c')).toBe('"a" """b""" "NEAR(c"');
    expect(ftsQuery('* ( "')).toBeNull();
    const count = await ctx.db.selectFrom('memories').selectAll().execute();
    expect(count).toHaveLength(1);
  });

  it('searches the history of this chat only (user and assistant messages)', async () => {
    await addMessage('conv-1', 'user', 'My favourite colour is turquoise');
    await addMessage('conv-1', 'assistant', 'Noted: turquoise it is');
    await addMessage('conv-1', 'tool', 'turquoise in a tool result');
    await addConversation('conv-old', 'console');
    await addMessage('conv-old', 'user', 'Earlier I said turquoise too');
    await addConversation('conv-other', 'someone-else');
    await addMessage('conv-other', 'user', 'turquoise secret of another chat');
    const r = await ctx.run(recallTool, { query: 'turquoise' });
    expect(r.output).toContain('Earlier messages in this chat:');
    expect(r.output).toContain('[turquoise]');
    expect(r.output).toContain('Earlier I said');
    expect(r.output).not.toContain('another chat');
    expect(r.output).not.toContain('tool result');
    // Updates and deletes keep the index in step.
    await ctx.db
      .updateTable('messages')
      .set({ content: 'changed to magenta' })
      .where('content', '=', 'Noted: turquoise it is')
      .execute();
    await ctx.db.deleteFrom('messages').where('content', '=', 'Earlier I said turquoise too').execute();
    const after = await ctx.run(recallTool, { query: 'turquoise' });
    expect(after.output.match(/^- \[/gm)).toHaveLength(1);
    expect((await ctx.run(recallTool, { query: 'magenta' })).output).toContain('[magenta]');
  });

  it('falls back to any word when no result has all of them', async () => {
    await ctx.run(rememberTool, { key: 'pet', value: 'a cat named Tom' });
    const r = await ctx.run(recallTool, { query: 'cat dog' });
    expect(r.output).toContain('showing results with any of them');
    expect(r.output).toContain('- pet: a cat named Tom');
  });

  it("puts the person's saved memories into the system prompt", async () => {
    const of = { db: ctx.db, conversationId: 'conv-1', requester: ctx.requester, config: ctx.config };
    expect(await memoriesSection(of)).toBeNull();
    await ctx.run(rememberTool, { key: 'tz', value: 'Europe/Berlin' });
    const section = await memoriesSection(of);
    expect(section).toContain('## Saved memories of this person');
    expect(section).toContain('- tz: Europe/Berlin');
    expect(section).not.toContain('Shared memories');
  });
});

describe('write_todos and update_scratchpad', () => {
  it('formats the list without storing it', async () => {
    const r = await ctx.run(writeTodosTool, {
      todos: [
        { content: 'read the code', status: 'completed' },
        { content: 'write the fix', status: 'in_progress' },
        { content: 'run tests', status: 'pending' },
      ],
    });
    expect(r.output).toBe('Todos (1/3 done):\n[x] 1. read the code\n[~] 2. write the fix\n[ ] 3. run tests');
    const bad = await ctx.run(writeTodosTool, { todos: [{ content: 'x', status: 'doing' }] });
    expect(bad.status).toBe('failed');
  });

  it('keeps one scratchpad per conversation, shown in the prompt', async () => {
    await ctx.run(updateScratchpadTool, { content: 'Plan: migrate the DB first.' });
    const row = await ctx.db
      .selectFrom('conversations')
      .select('scratchpad')
      .where('id', '=', 'conv-1')
      .executeTakeFirst();
    expect(row?.scratchpad).toBe('Plan: migrate the DB first.');
    expect(
      await scratchpadSection({ db: ctx.db, conversationId: 'conv-1', requester: ctx.requester, config: ctx.config }),
    ).toContain('Plan: migrate the DB first.');
    await ctx.run(updateScratchpadTool, { content: '' });
    expect(
      await scratchpadSection({ db: ctx.db, conversationId: 'conv-1', requester: ctx.requester, config: ctx.config }),
    ).toBeNull();
  });
});
