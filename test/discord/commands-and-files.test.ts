/** Discord: the slash command and `/command` text through the table, attachments both ways, a stranger's pairing. */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { alice, type DiscordStack, startDiscordStack, stranger, waitFor, waitForMessage } from './stack.js';

let s: DiscordStack | null = null;
afterEach(async () => {
  await s?.close();
  s = null;
});

describe('discord: commands', () => {
  it('registers /switchboard at start, retrying a refused registration', async () => {
    s = await startDiscordStack();
    await waitFor(() => s?.emu.commands.length === 1, 'registered');
    expect(s.emu.commands[0]).toMatchObject({ name: 'switchboard' });
    // A refusal is retried (the stack retries after 50 ms) and never stops the channel.
    s.emu.failNext({ method: 'PUT', path: /commands$/, status: 500, body: { message: 'boom', code: 0 } });
    const puts = () => s?.emu.requests.filter((r) => r.startsWith('PUT /applications/')).length ?? 0;
    await s.restart();
    await waitFor(() => puts() === 3 && s?.emu.commands.length === 1, 'tried again');
    expect(s.channel().health()).toBeNull();
  });

  it('runs /switchboard help as an answer to its caller alone, and /status as text in a DM', async () => {
    s = await startDiscordStack();
    const dm = s.emu.dmChannel(alice).id;
    const slash = s.emu.slash(alice, dm, 'help');
    await waitFor(() => slash.callbacks.length === 1, 'deferred');
    expect(slash.callbacks[0]).toMatchObject({ type: 5, data: { flags: 64 } });
    await waitFor(
      () => s?.emu.requests.some((r) => r.startsWith(`PATCH /webhooks/${s?.emu.applicationId}/${slash.token}`)),
      'answer',
    );
    s.emu.dm(alice, '/status');
    const status = await waitForMessage(s.emu, dm, (c) => /model/i.test(c), 'status answer');
    expect(status.content).toMatch(/idle/i);
    expect(s.llm.chatRequests()).toHaveLength(0);
  });
});

describe('discord: files and strangers', () => {
  it('saves an attachment under uploads/ for the turn, and sends a workspace file back', async () => {
    s = await startDiscordStack();
    const ws = path.join(s.dir, 'workspace');
    writeFileSync(path.join(ws, 'data.csv'), 'a,b\n1,2\n');
    s.llm.push(
      {
        text: 'got it',
        toolCalls: [{ name: 'send_attachment', arguments: '{"path":"data.csv","caption":"the data"}' }],
      },
      { text: 'all sent' },
    );
    const bytes = Buffer.from('line one\nline two\n');
    s.emu.dm(alice, 'summarize this', [{ name: 'notes.txt', data: bytes }]);
    const dm = s.emu.dmChannel(alice).id;
    await waitForMessage(s.emu, dm, (c) => c === 'all sent', 'final reply');
    const dir = path.join(ws, 'uploads');
    const saved = existsSync(dir)
      ? readdirSync(dir, { recursive: true, withFileTypes: true })
          .filter((e) => e.isFile())
          .map((e) => path.join(e.parentPath, e.name))
      : [];
    expect(saved).toHaveLength(1);
    expect(readFileSync(saved[0] as string)).toEqual(bytes);
    const user = s.llm.chatRequests()[0]?.body.messages.filter((m: { role: string }) => m.role === 'user');
    expect(JSON.stringify(user)).toContain('notes.txt');
    const file = await waitFor(() => s?.emu.botMessages(dm).find((m) => m.files['data.csv']), 'the file');
    expect(file.files['data.csv']?.toString()).toBe('a,b\n1,2\n');
    expect(file.content).toBe('the data');
  });

  it('gives a stranger a pairing code in a DM and does not call the model', async () => {
    s = await startDiscordStack();
    s.emu.dm(stranger, 'let me in');
    const dm = s.emu.dmChannel(stranger).id;
    const msg = await waitForMessage(s.emu, dm, (c) => /[A-Z2-9]{6}/.test(c), 'pairing code');
    const code = /([A-Z2-9]{6})/.exec(msg.content)?.[1];
    expect(msg.content).toContain(`pair approve ${code}`);
    const pending = await s.h.core.db.selectFrom('pairing_codes').selectAll().execute();
    expect(pending.map((p) => [p.channel, p.user_id, p.code])).toEqual([['discord', stranger.id, code]]);
    // In a server a stranger's mention starts no thread, and the code is not said in the channel
    // (Discord whispers only in answer to an interaction): it goes to their DM, and the channel is
    // told where it went.
    const eve = { id: '444', username: 'eve' };
    s.emu.guildMessage(eve, s.emu.guildChannel('6000').id, 'hello?', true);
    const pointer = await waitForMessage(s.emu, '6000', (c) => c.includes('direct message'), 'the pointer');
    expect(pointer.content).not.toMatch(/[A-Z2-9]{6}/);
    const eveDm = await waitForMessage(s.emu, s.emu.dmChannel(eve).id, (c) => /[A-Z2-9]{6}/.test(c), "eve's code");
    const eveCode = /([A-Z2-9]{6})/.exec(eveDm.content)?.[1];
    expect(
      s.emu
        .botMessages('6000')
        .map((m) => m.content)
        .join('\n'),
    ).not.toContain(eveCode);
    expect([...s.emu.channels.values()].filter((c) => c.type === 11)).toEqual([]);
    expect(s.llm.chatRequests()).toHaveLength(0);
  });

  it('asks an admin in their DM (named before they wrote) to approve a stranger; the button pairs them', async () => {
    s = await startDiscordStack({ overrides: { access: { admins: [`discord:${alice.id}`] } } });
    s.emu.dm(stranger, 'let me in');
    const adminDm = s.emu.dmChannel(alice).id;
    const request = await waitFor(
      () => s?.emu.botMessages(adminDm).find((m) => m.components.length > 0),
      'the pairing request in the admin DM',
    );
    const pair = request.components[0]?.components[0];
    s.emu.click(alice, request.id, String(pair?.custom_id));
    await waitFor(async () => s?.h.core.isAllowed('discord', stranger.id), 'the stranger paired');
    s.llm.push({ text: 'welcome in' });
    s.emu.dm(stranger, 'now?');
    await waitForMessage(s.emu, s.emu.dmChannel(stranger).id, (c) => c === 'welcome in', 'an answer now');
  });
});
