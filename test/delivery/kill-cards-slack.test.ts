/**
 * Kill test of an approval card against the Slack emulator (Socket Mode): `switchboard start` as
 * a child process over one database. The card's post is half sent when its instance dies, the
 * decision comes while nobody sends the row, the process is killed again while the outcome is
 * drawn, Slack answers 429 and a button from before the restart is clicked again: the card stays
 * one message, ends without buttons naming who decided, and the answer is shown once.
 */
import { describe, expect, it } from 'vitest';
import { blockAction, eventCallback } from '../emulators/slack-payloads.js';
import type { EmuMessage } from '../emulators/slack.js';
import { ALICE, DM, killBudget, slackSocket, useKillWorld, visible, waitFor } from '../helpers/kill-harness.js';
import { answerFor } from '../helpers/kill-model.js';

/** The claim of an instance on another machine that died while posting (never "gone" to this host). */
const ELSEWHERE = 'another-host:4242:0:1';

const world = useKillWorld(slackSocket, { prefix: 'sb-kill-cards-slack', toml: '[slack]\nstream_interval_ms = 100\n' });

/** Buttons of a message. */
function buttonsOf(m: EmuMessage): Array<{ action_id: string; value: string }> {
  return (m.blocks ?? []).filter((b: any) => b.type === 'actions').flatMap((b: any) => b.elements);
}

/** Bot messages showing an approval card (asking, or its outcome). */
const cards = () =>
  world()
    .emu.botMessages(DM)
    .filter((m) => /Approval needed|Approved|Denied/.test(visible(m)));

const answerish = () =>
  world()
    .emu.botMessages(DM)
    .map(visible)
    .filter((t) => t.startsWith('Answ'));

/** Click Approve on `card` with the button as it was drawn. */
function clickApprove(card: EmuMessage, button: { action_id: string; value: string }): Promise<unknown> {
  return world().emu.deliver(
    'interactive',
    blockAction({
      user: ALICE,
      channel: DM,
      messageTs: card.ts,
      threadTs: card.thread_ts,
      actionId: button.action_id,
      value: button.value,
    }),
  );
}

describe('slack: a decided card settles, whatever dies when', () => {
  // Three starts; waits: the posted card, two kills, the approval recorded, the held redraw, the
  // answer, every card settled, the ledger empty (eight).
  it('decided while its half-sent post waits for a dead sender, killed while drawing the outcome, 429s: one card, no buttons, who decided', {
    timeout: killBudget(3, 8),
  }, async () => {
    const { emu, db, start, kill, openRows } = world();
    const first = await start();
    // Slack takes the card; the instance dies before it learns the message's ts.
    const posted = emu.hold('chat.postMessage', {
      match: (a) => a.channel === DM && JSON.stringify(a.blocks ?? '').includes('actions'),
      phase: 'after',
    });
    await emu.deliver(
      'events_api',
      eventCallback(emu.userMessage({ channel: DM, user: ALICE, text: 'approve it', channelType: 'im' }), {
        botUserId: emu.botUserId,
      }),
    );
    await posted.arrived;
    await kill(first);
    const [card] = cards() as [EmuMessage];
    const approve = buttonsOf(card).find((b) => b.value.endsWith(':y'));
    if (!approve) throw new Error('the card shows no Approve button');

    // As if the row had been claimed by an instance elsewhere that died: nobody sends it until
    // that claim runs out, and Alice approves meanwhile.
    await db
      .updateTable('deliveries')
      .set({ claimed_by: ELSEWHERE, claim_expires_at: Date.now() + 600_000 })
      .where('kind', '=', 'card')
      .execute();
    const second = await start();
    const drawing = emu.hold('chat.update', { match: (a) => a.channel === DM && a.ts === card.ts });
    await clickApprove(card, approve);
    await waitFor(async () => {
      const row = await db.selectFrom('approvals').select('status').executeTakeFirst();
      return row?.status === 'approved';
    }, 'the approval recorded');
    await db.updateTable('deliveries').set({ claim_expires_at: 0 }).where('kind', '=', 'card').execute();
    // The outcome is on its way to Slack when the process dies.
    await drawing.arrived;
    await kill(second);

    emu.rateLimit('chat.update', 3, '1');
    await start();
    // The same button again, from before the restart.
    await clickApprove(card, approve);
    const clicked = new Set([card.ts]);
    await waitFor(() => {
      // A command the crash cut short runs again only after a new approval: Alice gives it.
      for (const m of cards()) {
        const again = buttonsOf(m).find((b) => b.value.endsWith(':y'));
        if (again && !clicked.has(m.ts)) {
          clicked.add(m.ts);
          void clickApprove(m, again);
        }
      }
      return answerish().includes(answerFor('approve it'));
    }, 'the answer after the approval');
    await waitFor(
      () =>
        cards().every((m) => buttonsOf(m).length === 0 && /Approved/.test(visible(m)) && visible(m).includes(ALICE)),
      'every card settled, naming who decided',
    );
    await waitFor(async () => (await openRows()) === 0, 'the ledger to be empty');
    // The half-sent card was found on Slack, not posted a second time.
    expect(cards().filter((m) => m.ts === card.ts)).toHaveLength(1);
    expect(cards().filter((m) => !visible(m).includes('re-run after a restart'))).toHaveLength(1);
    expect(answerish()).toEqual([answerFor('approve it')]);
  });
});
