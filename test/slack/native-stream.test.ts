/**
 * Slack's own streamed messages (`slack.streaming = "native"`, the default): a reply in a thread
 * is one message started with chat.startStream, appended to and stopped; rolled over to a new
 * message before Slack would expire it; edited by chat.update when the stream expired anyway or
 * Slack refuses streams (once, for the rest of the run).
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { EmuMessage } from '../emulators/slack.js';
import { ALICE, type SlackStack, startSlackStack, visibleText, waitFor } from './stack.js';

/** Plain words (no Markdown) long enough to stream in many pieces. */
function words(n: number, tag: string): string {
  return Array.from({ length: n }, (_, i) => `${tag}${i}`).join(' ');
}

describe('Slack native streams', () => {
  let stack: SlackStack;
  afterEach(async () => {
    await stack?.close();
  });

  const calls = (method: string) => stack.emu.calls.filter((c) => c.method === method && c.status === 200);

  async function replyRows(): Promise<Array<{ status: string; refs: string }>> {
    return stack.core.db.selectFrom('deliveries').select(['status', 'refs']).where('kind', '=', 'reply').execute();
  }

  /** Ask in a channel thread (an @mention) and wait until the answer's row is delivered. */
  async function askInThread(text: string): Promise<string> {
    const mention = stack.emu.userMessage({ channel: 'C1', user: ALICE, text, mention: true });
    await stack.sendEvent(mention);
    await waitFor(
      async () => (await replyRows()).length > 0 && (await replyRows()).every((r) => r.status === 'delivered'),
      'the reply delivered',
    );
    await stack.quiesce();
    return mention.ts;
  }

  const joined = (ms: EmuMessage[]) => ms.map((m) => m.text).join('');

  it('streams a thread reply into one message by appending, nothing lost or doubled', async () => {
    stack = await startSlackStack('http');
    const answer = words(120, 'w');
    stack.llm.push({ text: answer, chunkSize: 25, delayMs: 15 });
    const thread = await askInThread('tell me');
    const mine = stack.emu.botMessages('C1', thread);
    expect(mine).toHaveLength(1);
    expect(mine[0]!.text).toBe(answer);
    expect(mine[0]!.streaming).toBe(false);
    // Appended to, not replaced: every version begins with the one before.
    const versions = mine[0]!.history.map((h) => h.text);
    expect(versions.length).toBeGreaterThan(2);
    for (const [i, v] of versions.entries()) if (i > 0) expect(v.startsWith(versions[i - 1]!)).toBe(true);
    const start = calls('chat.startStream');
    expect(start).toHaveLength(1);
    // Outside a DM the stream names whom it is for.
    expect(start[0]!.args).toMatchObject({ recipient_user_id: ALICE, recipient_team_id: stack.emu.teamId });
    expect(calls('chat.stopStream')).toHaveLength(1);
    expect(calls('chat.update')).toHaveLength(0);
    expect(stack.channel.streams.inForce).toBe('native');
  });

  it('streams in a DM assistant thread; the top level of a DM still streams by chat.update', async () => {
    stack = await startSlackStack('http');
    const answer = words(80, 'd');
    stack.llm.push({ text: answer, chunkSize: 30, delayMs: 15 }, { text: 'top level answer that is plain' });
    const parent = stack.emu.userMessage({ channel: 'D1', user: ALICE, text: 'parent' });
    const inThread = stack.emu.userMessage({ channel: 'D1', user: ALICE, text: 'hi', threadTs: parent.ts });
    await stack.sendEvent(inThread);
    await waitFor(() => stack.emu.botMessages('D1', parent.ts).some((m) => m.text === answer), 'the answer');
    await stack.quiesce();
    expect(stack.emu.botMessages('D1', parent.ts)).toHaveLength(1);
    expect(calls('chat.startStream')[0]!.args.recipient_user_id).toBeUndefined();

    await stack.sendEvent(stack.emu.userMessage({ channel: 'D1', user: ALICE, text: 'top' }));
    await waitFor(() => stack.findBot('D1', 'top level answer').length, 'the top-level answer');
    await stack.quiesce();
    expect(calls('chat.startStream')).toHaveLength(1);
    expect(stack.findBot('D1', 'top level answer')[0]!.thread_ts).toBeUndefined();
  });

  it('rolls a stream over to a new message before Slack expires it: one row, nothing lost or doubled', async () => {
    stack = await startSlackStack('http', { overrides: { slack: { stream_rollover_ms: 700 } } as never });
    stack.emu.streams.expiryMs = 1_500;
    const answer = words(200, 'r');
    // ~2.5 s of streaming: past the rollover several times, never past Slack's expiry.
    stack.llm.push({ text: answer, chunkSize: 20, delayMs: 50 });
    const thread = await askInThread('long one');
    const mine = stack.emu.botMessages('C1', thread);
    expect(mine.length).toBeGreaterThan(1);
    expect(joined(mine)).toBe(answer);
    expect(mine.every((m) => m.streaming === false)).toBe(true);
    expect(calls('chat.update')).toHaveLength(0);
    expect(stack.emu.calls.filter((c) => c.method.endsWith('Stream') && c.status !== 200)).toEqual([]);
    const rows = await replyRows();
    expect(rows).toHaveLength(1);
    expect(JSON.parse(rows[0]!.refs).map((r: { ref: string }) => r.ref)).toEqual(mine.map((m) => m.ts));
  });

  it('an expired stream is finished by chat.update without losing text', async () => {
    stack = await startSlackStack('http');
    stack.emu.streams.expiryMs = 300;
    const answer = words(150, 'e');
    stack.llm.push({ text: answer, chunkSize: 20, delayMs: 40 });
    const thread = await askInThread('expire');
    const mine = stack.emu.botMessages('C1', thread);
    expect(mine).toHaveLength(1);
    expect(visibleText(mine[0]!)).toBe(answer);
    expect(stack.emu.calls.some((c) => c.method === 'chat.appendStream' && c.status === 200)).toBe(true);
    expect(calls('chat.update').length).toBeGreaterThan(0);
  });

  it('a server that refuses streams is detected once; replies stream by chat.update for the rest of the run', async () => {
    stack = await startSlackStack('http');
    stack.emu.streams.refuse = true;
    const first = words(60, 'a');
    const second = words(60, 'b');
    stack.llm.push({ text: first, chunkSize: 20, delayMs: 15 }, { text: second, chunkSize: 20, delayMs: 15 });
    const t1 = await askInThread('one');
    expect(stack.channel.streams.inForce).toBe('update');
    expect(stack.channel.streams.refused).toBe('unknown_method');
    const t2 = await askInThread('two');
    expect(stack.emu.botMessages('C1', t1).map(visibleText)).toEqual([first]);
    expect(stack.emu.botMessages('C1', t2).map(visibleText)).toEqual([second]);
    expect(stack.emu.calls.filter((c) => c.method === 'chat.startStream')).toHaveLength(1);
  });

  it('slack.streaming = "update" never calls the stream methods', async () => {
    stack = await startSlackStack('http', { overrides: { slack: { streaming: 'update' } } as never });
    const answer = words(60, 'u');
    stack.llm.push({ text: answer, chunkSize: 20, delayMs: 15 });
    const thread = await askInThread('plain');
    expect(stack.emu.botMessages('C1', thread).map(visibleText)).toEqual([answer]);
    expect(stack.emu.calls.filter((c) => c.method.endsWith('Stream'))).toEqual([]);
    expect(stack.channel.streams.inForce).toBe('update');
  });
});
