import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { slashCommand } from '../emulators/slack-payloads.js';
import { ALICE, type SlackStack, STRANGER, startSlackStack, waitFor, writeWorkspaceFile } from './stack.js';
import { rejection, sentCopy } from '../helpers/sent-files.js';

/** The ephemeral text a slash command answered with (HTTP response body or socket ack payload). */
function commandText(res: { status: number; body: string }): string {
  expect(res.status).toBe(200);
  const body = JSON.parse(res.body) as { response_type?: string; text?: string };
  expect(body.response_type).toBe('ephemeral');
  return body.text ?? '';
}

describe.each(['http', 'socket'] as const)('Slack files and the slash command (%s mode)', (mode) => {
  let stack: SlackStack;
  afterEach(async () => {
    await stack?.close();
  });

  it('downloads a shared file into uploads/ and hands it to the turn; refuses one over the cap', async () => {
    stack = await startSlackStack(mode, { overrides: { slack: { max_download_bytes: 1000 } } });
    stack.llm.push({ text: 'got your file' });
    const small = stack.emu.hostFile('notes v1.txt', Buffer.from('hello from slack\n'), 'text/plain');
    const big = stack.emu.hostFile('huge.bin', Buffer.alloc(5000, 1));
    const ev = stack.emu.userMessage({ channel: 'D1', user: ALICE, text: 'have a look', files: [small, big] });
    await stack.sendEvent(ev);
    await waitFor(() => stack.findBot('D1', 'got your file').length, 'reply');
    const warning = stack.findBot('D1', 'could not take');
    expect(warning).toHaveLength(1);
    expect(warning[0]!.text).toContain('huge.bin');
    const userMsg = JSON.stringify(stack.llm.chatRequests()[0]!.body.messages);
    // In the DM's folder (a one-to-one chat: the person's).
    const rel = /uploads\/slack\/D1\/[\w.-]*notes_v1\.txt/.exec(userMsg)?.[0];
    expect(rel).toBeDefined();
    expect(readFileSync(path.join(stack.workspace, rel!), 'utf8')).toBe('hello from slack\n');
    expect(userMsg).not.toContain('huge.bin');
    expect(existsSync(path.join(stack.workspace, 'uploads'))).toBe(true);
  });

  it('does not download files from an unknown user, who gets a pairing code instead', async () => {
    stack = await startSlackStack(mode);
    const file = stack.emu.hostFile('secret.txt', Buffer.from('data'));
    await stack.sendEvent(stack.emu.userMessage({ channel: 'D8', user: STRANGER, text: '', files: [file] }));
    await waitFor(() => stack.findBot('D8', 'pairing code').length, 'pairing reply');
    await stack.quiesce();
    expect(existsSync(path.join(stack.workspace, 'uploads'))).toBe(false);
    expect(stack.llm.chatRequests()).toHaveLength(0);
  });

  it('uploads a workspace file into the thread; a file over the cap fails the tool with a clear error', async () => {
    stack = await startSlackStack(mode, { overrides: { slack: { max_upload_bytes: 2000 } } });
    await writeWorkspaceFile(stack, 'report.csv', 'a,b\n1,2\n');
    await writeWorkspaceFile(stack, 'big.bin', Buffer.alloc(4000, 7));
    stack.llm.push(
      {
        toolCalls: [
          { name: 'send_attachment', arguments: JSON.stringify({ path: 'report.csv', caption: 'the report' }) },
        ],
      },
      { toolCalls: [{ name: 'send_attachment', arguments: JSON.stringify({ path: 'big.bin' }) }] },
      { text: 'sent what I could' },
    );
    const mention = stack.emu.userMessage({ channel: 'C1', user: ALICE, text: 'send me the report', mention: true });
    await stack.sendEvent(mention);
    await waitFor(() => stack.findBot('C1', 'sent what I could', mention.ts).length, 'final reply');
    const done = stack.emu.uploads.filter((u) => u.completed);
    expect(done).toHaveLength(1);
    expect(done[0]).toMatchObject({
      filename: 'report.csv',
      channel: 'C1',
      thread_ts: mention.ts,
      initial_comment: 'the report',
    });
    expect(done[0]!.bytes.toString()).toBe('a,b\n1,2\n');
    const toolResult = JSON.stringify(stack.llm.chatRequests()[2]!.body.messages);
    expect(toolResult).toContain('slack.max_upload_bytes');
    // send_attachment is offered on Slack (deferred: named in the system prompt, switched on by the call), send_voice_message is not
    const system = stack.llm.chatRequests()[0]!.body.messages[0].content as string;
    expect(system).toContain('send (send_attachment)');
    expect(system).not.toContain('send_voice_message');
    const offered = (stack.llm.chatRequests()[1]!.body.tools ?? []).map(
      (t: { function: { name: string } }) => t.function.name,
    );
    expect(offered).toContain('send_attachment');
    expect(offered).not.toContain('send_voice_message');
  });

  it('a file gone or a folder gets no copy; the surface refuses a copy over slack.max_upload_bytes before any upload, for good', async () => {
    stack = await startSlackStack(mode, { overrides: { slack: { max_upload_bytes: 2000 } } });
    await writeWorkspaceFile(stack, 'big.bin', Buffer.alloc(4000, 7));
    mkdirSync(path.join(stack.workspace, 'reports'));
    const before = readdirSync(stack.workspace).sort();
    const copyRefused = async (name: string) => (await rejection(sentCopy(stack.core, name)))?.message;
    expect(await copyRefused('gone.csv')).toMatch(/^Cannot read gone\.csv: ENOENT/);
    expect(await copyRefused('reports')).toBe('reports is not a regular file');
    const surface = stack.channel.surface;
    const address = { slackChannel: 'C1', threadTs: '1.0', assistantThread: false };
    const err = await rejection(surface.upload(address, await sentCopy(stack.core, 'big.bin')));
    expect(surface.classify(err)).toMatchObject({ kind: 'permanent' });
    expect(err?.message).toBe('big.bin is 4 KB, over the 2 KB limit (slack.max_upload_bytes)');
    expect(stack.emu.uploads).toEqual([]);
    expect(readdirSync(stack.workspace).sort()).toEqual(before);
  });

  it('answers /switchboard help, status, stop and new', async () => {
    stack = await startSlackStack(mode);
    const send = (text: string, user = ALICE, channel = 'D1') =>
      stack.emu.deliver('slash_commands', slashCommand({ user, channel, text }));
    expect(commandText(await send('help'))).toContain('/switchboard new');
    expect(commandText(await send(''))).toContain('/switchboard status');
    expect(commandText(await send('status'))).toContain('Turn: idle');
    expect(commandText(await send('stop'))).toContain('Nothing is running');
    expect(commandText(await send('frobnicate'))).toContain('Unknown command /switchboard frobnicate');
    expect(commandText(await send('status', STRANGER))).toContain('not allowed');
    expect(commandText(await send('rules'))).toContain('No stored rules.');
    expect(commandText(await send('rules revoke 42'))).toBe('Not revoked: no rule #42 of yours.');

    stack.llm.push({ text: 'first conversation' });
    await stack.sendEvent(stack.emu.userMessage({ channel: 'D1', user: ALICE, text: 'hi' }));
    await waitFor(() => stack.findBot('D1', 'first conversation').length, 'reply');
    await stack.quiesce();
    const before = await stack.core.findConversation({ channel: 'slack', chatKey: 'D1', threadKey: '' });
    expect(before).toBeDefined();
    expect(commandText(await send('status'))).toContain('Model: `test-model`');
    expect(commandText(await send('new'))).toContain('Started a fresh conversation');
    expect(await stack.core.findConversation({ channel: 'slack', chatKey: 'D1', threadKey: '' })).toBeUndefined();
    // the old conversation is archived, not deleted
    const rows = await stack.core.db.selectFrom('conversations').select(['id', 'archived']).execute();
    expect(rows).toEqual([{ id: before!.id, archived: 1 }]);
  });

  it('stops a running turn with /switchboard stop', async () => {
    stack = await startSlackStack(mode);
    stack.llm.push({ hang: true, text: 'thinking very hard' });
    await stack.sendEvent(stack.emu.userMessage({ channel: 'D1', user: ALICE, text: 'take your time' }));
    await waitFor(() => stack.findBot('D1', 'thinking very hard').length, 'streamed start');
    const text = commandText(
      await stack.emu.deliver('slash_commands', slashCommand({ user: ALICE, channel: 'D1', text: 'stop' })),
    );
    expect(text).toContain('Stopped');
    await waitFor(() => stack.findBot('D1', '(stopped)').length, 'stopped marker');
    const turn = await stack.core.db.selectFrom('turns').select('status').executeTakeFirstOrThrow();
    expect(turn.status).toBe('cancelled');
  });
});
