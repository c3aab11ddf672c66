/**
 * Kill tests against the Slack emulator (Socket Mode): `switchboard start` as a child process,
 * SIGKILLed after an answer is stored and before Slack has it, during a streamed update, and
 * between Slack accepting a post and the ledger recording it — the restart looks the post up
 * instead of posting it twice.
 */
import { describe, expect, it } from 'vitest';
import { eventCallback } from '../emulators/slack-payloads.js';
import {
  ALICE,
  DM,
  heldSlowAnswer,
  killBudget,
  slackSocket,
  useKillWorld,
  visible,
  waitFor,
} from '../helpers/kill-harness.js';
import { answerFor } from '../helpers/kill-model.js';

const world = useKillWorld(slackSocket, { prefix: 'sb-kill-slack', toml: '[slack]\nstream_interval_ms = 100\n' });

function ask(text: string): Promise<unknown> {
  const { emu } = world();
  return emu.deliver(
    'events_api',
    eventCallback(emu.userMessage({ channel: DM, user: ALICE, text, channelType: 'im' }), { botUserId: emu.botUserId }),
  );
}

const answers = () =>
  world()
    .emu.botMessages(DM)
    .map(visible)
    .filter((t) => t.startsWith('Answer to'));

describe('slack: SIGKILL at the awkward moments of delivery', () => {
  // Three starts; waits: the first answer, the held post, the stored answer, two kills, the
  // accepted post, the stored answer after the restart, and the final judgement (2).
  it('stored but not sent, then killed again after Slack took the post: shown exactly once, in order', {
    timeout: killBudget(3, 9),
  }, async () => {
    const { emu, db, start, kill, expectExactly } = world();
    const first = await start();
    await ask('q1');
    await waitFor(() => answers().includes(answerFor('q1')), 'the first answer');

    const held = emu.hold('chat.postMessage', { match: (a) => a.channel === DM });
    await ask('q2');
    await held.arrived;
    await waitFor(async () => {
      const rows = await db.selectFrom('deliveries').select('content').where('kind', '=', 'reply').execute();
      return rows.some((r) => r.content?.includes('Answer to q2') && !r.content.includes('"partial":true'));
    }, 'the answer stored');
    await kill(first);

    // Recovery posts the stored answer; Slack takes it but the answer never reaches the process.
    const accepted = emu.hold('chat.postMessage', { match: (a) => a.channel === DM, phase: 'after' });
    const second = await start();
    await accepted.arrived;
    await kill(second);

    await start();
    await waitFor(() => answers().includes(answerFor('q2')), 'the stored answer');
    await ask('q3');
    await expectExactly(answers, [answerFor('q1'), answerFor('q2'), answerFor('q3')]);
  });

  // Two starts; waits: the first words, the held update, the stream recorded, the kill, and the
  // final judgement (2).
  it('during a streamed update: the restarted answer finishes the message already shown', {
    timeout: killBudget(2, 6),
  }, async () => {
    const { emu, llm, start, kill, streamRecorded, expectExactly } = world();
    const slow = heldSlowAnswer();
    llm.setHandler(slow.model);
    const first = await start();
    const held = emu.hold('chat.update', { match: (a) => a.channel === DM });
    await ask('slow q');
    // The first words are posted; then the answer goes on, and the message is being updated.
    const fragment = await waitFor(
      () => emu.botMessages(DM).find((m) => visible(m).startsWith('Answ')),
      'the first words posted',
    );
    slow.resume();
    await held.arrived;
    await streamRecorded(fragment?.ts);
    await kill(first);

    await start();
    await expectExactly(answers, [answerFor('slow q')]);
    expect(
      emu
        .botMessages(DM)
        .filter((m) => visible(m).startsWith('Answ'))
        .map((m) => m.ts),
    ).toEqual([fragment?.ts]);
  });
});
