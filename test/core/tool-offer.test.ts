import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { configSchema } from '../../src/config.js';
import type { Channel } from '../../src/contract/channel.js';
import { ACTIVATE_TOOL } from '../../src/core/deferred-tools.js';
import { ToolOffers } from '../../src/core/tool-offer.js';
import { ToolRegistry } from '../../src/core/tool-registry.js';
import { StaticToolSource } from '../../src/tools/source.js';
import { type Db, migrateToLatest } from '../../src/store/db.js';
import { hotCache } from '../../src/store/hot-cache.js';
import { insertRule } from '../../src/store/repos/approvals.js';
import { ensureConversation } from '../../src/store/repos/conversations.js';
import { grantGroups } from '../../src/store/repos/grants.js';
import { bumpVersion } from '../../src/store/repos/versions.js';
import { openTestDatabase } from '../helpers/test-db.js';
import { defineTool } from '../../src/tools/define.js';

const tool = (name: string) =>
  defineTool({
    name,
    description: `the ${name} tool`,
    schema: z.object({ x: z.string() }),
    meta: { category: 'misc', defaultApproval: 'allow' },
    describe: () => name,
    execute: async () => ({ output: name }),
  });

describe('model-facing tool lists', () => {
  it('are built once per catalog: the same tools give the same array until a tool is registered', () => {
    const registry = new ToolRegistry();
    registry.register(tool('a'));
    registry.register(tool('b'));
    const first = registry.modelTools(registry.all());
    expect(registry.modelTools(registry.all())).toBe(first);
    expect(first.map((t) => t.name)).toEqual(['a', 'b']);
    const onlyA = registry.modelTools(registry.all().filter((t) => t.name === 'a'));
    expect(onlyA).not.toBe(first);
    expect(onlyA.map((t) => t.name)).toEqual(['a']);

    registry.register(tool('c'));
    const after = registry.modelTools(registry.all());
    expect(after).not.toBe(first);
    expect(after.map((t) => t.name)).toEqual(['a', 'b', 'c']);
    expect(after[2]?.parameters).toMatchObject({ type: 'object' });
  });
});

describe('lazy groups', () => {
  it('are one list until the catalog changes: deferring a group or adding a lazy source makes a new one', () => {
    const registry = new ToolRegistry();
    registry.register(tool('a'));
    registry.defer([{ name: 'g1', description: 'first', tools: ['a'] }]);
    const first = registry.lazyGroups();
    expect(registry.lazyGroups()).toBe(first);
    expect(first).toEqual([{ name: 'g1', description: 'first' }]);
    const lazySource = Object.assign(new StaticToolSource('lazy-one', []), {
      lazy: { name: 'g2', description: 'second' },
    });
    registry.addSource(lazySource);
    const second = registry.lazyGroups();
    expect(second).not.toBe(first);
    expect(second.map((g) => g.name)).toEqual(['g1', 'g2']);
  });
});

describe('the offer of a conversation’s rounds', () => {
  let db: Db | null = null;
  afterEach(async () => {
    await db?.destroy();
    db = null;
  });

  async function setUp() {
    db = openTestDatabase(mkdtempSync(path.join(os.tmpdir(), 'sb-offer-')));
    await migrateToLatest(db);
    const registry = new ToolRegistry();
    registry.register(tool('a'));
    registry.register(tool('b'));
    registry.register(tool('c'));
    registry.defer([{ name: 'extra', description: 'the c tool', tools: ['c'] }]);
    registry.register(tool(ACTIVATE_TOOL));
    const config = configSchema.parse({});
    const offers = new ToolOffers(db, config, registry, pino({ level: 'silent' }));
    const conversation = await ensureConversation(db, { channel: 'test', chatKey: 'chat', threadKey: '' }, 'test:u');
    const channel = { capabilities: new Set<never>() } as unknown as Channel;
    const names = (o: { tools: Array<{ name: string }> }) => o.tools.map((t) => t.name);
    return { db, registry, offers, conversation, channel, names };
  }

  it('is worked out once and reused while nothing it depends on changed; a rule, a grant, the catalog or the row changing makes a new one', async () => {
    const { db, registry, offers, conversation, channel, names } = await setUp();
    const first = await offers.offer(conversation, channel, 'test:u');
    expect(names(first)).toEqual(['a', 'b', ACTIVATE_TOOL]);
    expect(first.line).toContain('extra (c)');
    expect(await offers.offer(conversation, channel, 'test:u')).toBe(first);

    // A deny rule (written here: this process reads its own write at once).
    await insertRule(db, {
      tool_glob: 'b',
      path_glob: null,
      action: 'deny',
      priority: 10,
      conversation_id: null,
      created_by: null,
    });
    const denied = await offers.offer(conversation, channel, 'test:u');
    expect(denied).not.toBe(first);
    expect(names(denied)).toEqual(['a', ACTIVATE_TOOL]);
    expect(await offers.offer(conversation, channel, 'test:u')).toBe(denied);

    // The deferred group switched on in this conversation.
    await grantGroups(db, conversation.id, ['extra'], 'test:u');
    const granted = await offers.offer(conversation, channel, 'test:u');
    expect(names(granted)).toEqual(['a', ACTIVATE_TOOL, 'c']);
    expect(granted.line).toBe(denied.line);

    // A tool added to the catalog.
    registry.register(tool('d'));
    expect(names(await offers.offer(conversation, channel, 'test:u'))).toEqual(['a', ACTIVATE_TOOL, 'd', 'c']);

    // Another row of the conversation (as the store's copy hands out after a change) is looked at anew.
    const child = { ...conversation, parent_id: 'parent', depth: 1 };
    expect(names(await offers.offer(child, channel, 'test:u'))).toEqual([]);
    // Another requester has rules of its own: its own offer, equal here.
    expect(names(await offers.offer(conversation, channel, 'test:v'))).toEqual(['a', ACTIVATE_TOOL, 'd', 'c']);
  });

  it('a rule written by another process is seen after the next check of the change counters', async () => {
    const { db, offers, conversation, channel, names } = await setUp();
    const first = await offers.offer(conversation, channel, 'test:u');
    // Another process's write: the row and the counter, without this process's local-write mark.
    await db
      .insertInto('approval_rules')
      .values({
        tool_glob: 'a',
        path_glob: null,
        action: 'deny',
        priority: 10,
        conversation_id: null,
        created_by: null,
        created_at: Date.now(),
      })
      .execute();
    await bumpVersion(db, 'rules');
    // Each turn step checks the counters.
    await hotCache(db).refresh();
    const after = await offers.offer(conversation, channel, 'test:u');
    expect(after).not.toBe(first);
    expect(names(after)).toEqual(['b', ACTIVATE_TOOL]);
  });
});
