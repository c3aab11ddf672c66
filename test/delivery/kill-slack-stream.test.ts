/**
 * Kill test of Slack's native streams: `switchboard start` as a child process, SIGKILLed while a
 * reply streams into a chat.startStream message (an append on its way). The restarted process
 * finishes that same message: one whole answer, nothing doubled, no second message. And killed
 * while a tool call's task is on its way into the turn's steps message (task_update chunks): the
 * restarted process finishes the task in that message, once.
 */
import { describe, expect, it } from 'vitest';
import { eventCallback } from '../emulators/slack-payloads.js';
import { ALICE, DM, heldSlowAnswer, killBudget, slackSocket, useKillWorld, waitFor } from '../helpers/kill-harness.js';
import { answerFor, scriptedModel } from '../helpers/kill-model.js';

const world = useKillWorld(slackSocket, {
  prefix: 'sb-kill-slack-stream',
  toml: '[slack]\nstream_interval_ms = 100\n',
});

describe('slack: SIGKILL mid native stream', () => {
  // Two starts; waits: the held append, the stream recorded, the kill, and the final judgement (2).
  it('the restarted answer finishes the streamed message: one whole answer', {
    timeout: killBudget(2, 5),
  }, async () => {
    const { emu, llm, start, kill, streamRecorded, expectExactly } = world();
    // The first `slow` answer stops after its first words until the process is gone.
    llm.setHandler(heldSlowAnswer({ stopAt: 60 }).model);
    const first = await start();
    const parent = emu.userMessage({ channel: DM, user: ALICE, text: 'thread' });
    const held = emu.hold('chat.appendStream', { match: (a) => a.channel === DM });
    await emu.deliver(
      'events_api',
      eventCallback(emu.userMessage({ channel: DM, user: ALICE, text: 'slow q', threadTs: parent.ts }), {
        botUserId: emu.botUserId,
      }),
    );
    await held.arrived;
    const fragment = emu.botMessages(DM, parent.ts).find((m) => m.text.startsWith('Answ'));
    expect(fragment?.streaming).toBe(true);
    await streamRecorded(fragment?.ts);
    await kill(first);

    await start();
    const whole = answerFor('slow q');
    const shown = () =>
      emu
        .botMessages(DM, parent.ts)
        .map((m) => m.text)
        .filter((t) => t.startsWith('Answ'));
    await expectExactly(shown, [whole]);
    const answers = emu.botMessages(DM, parent.ts).filter((m) => m.text.startsWith('Answ'));
    expect(answers.map((m) => m.ts)).toEqual([fragment?.ts]);
    expect(answers[0]!.text).toBe(whole);
    expect(answers[0]!.streaming).toBe(false);
    // Finished by appending to the stream, not replaced by chat.update.
    expect(answers[0]!.blocks).toBeUndefined();
    expect(emu.calls.filter((c) => c.method === 'chat.update' && c.args.ts === fragment?.ts)).toEqual([]);
  });

  // Two starts; waits: the held append, the kill, the answer, the ledger settled.
  it('killed as a finished tool call goes into the steps message: the restart finishes that task in it, once', {
    timeout: killBudget(2, 4),
  }, async () => {
    const { emu, llm, start, kill, openRows } = world();
    // One tool call (update_scratchpad: allowed without asking), then the answer.
    llm.setHandler((body) => {
      const last = body.messages.at(-1);
      if (last?.role !== 'tool')
        return { toolCalls: [{ name: 'update_scratchpad', arguments: JSON.stringify({ content: 'noted' }) }] };
      return scriptedModel(body);
    });
    const first = await start();
    const parent = emu.userMessage({ channel: DM, user: ALICE, text: 'thread' });
    const chunkOf = (a: Record<string, any>) => (typeof a.chunks === 'string' ? JSON.parse(a.chunks) : a.chunks);
    // The task's "complete" never reaches Slack from the first process.
    const held = emu.hold('chat.appendStream', {
      match: (a) => a.channel === DM && (chunkOf(a) ?? []).some((c: any) => c.status === 'complete'),
    });
    await emu.deliver(
      'events_api',
      eventCallback(emu.userMessage({ channel: DM, user: ALICE, text: 'steps q', threadTs: parent.ts }), {
        botUserId: emu.botUserId,
      }),
    );
    await held.arrived;
    const steps = emu.botMessages(DM, parent.ts).find((m) => (m.tasks ?? []).length > 0);
    expect(steps?.tasks?.[0]).toMatchObject({ status: 'in_progress' });
    await kill(first);

    await start();
    await waitFor(() => emu.botMessages(DM, parent.ts).some((m) => m.text.startsWith('Answ')), 'the answer');
    await waitFor(async () => (await openRows()) === 0, 'the ledger settled');
    const withTasks = emu.botMessages(DM, parent.ts).filter((m) => (m.tasks ?? []).length > 0);
    expect(withTasks.map((m) => m.ts)).toEqual([steps?.ts]);
    expect(withTasks[0]!.tasks).toHaveLength(1);
    expect(withTasks[0]!.tasks![0]).toMatchObject({ id: 't1', status: 'complete' });
    expect(withTasks[0]!.streaming).toBe(false);
    // No task card message beside it, and one answer.
    expect(emu.botMessages(DM, parent.ts).filter((m) => (m.blocks ?? []).some((b) => b.type === 'task_card'))).toEqual(
      [],
    );
    expect(emu.botMessages(DM, parent.ts).filter((m) => m.text.startsWith('Answ'))).toHaveLength(1);
  });
});
