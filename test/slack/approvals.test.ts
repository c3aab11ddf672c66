// biome-ignore-all lint/suspicious/noExplicitAny: Slack payloads and Block Kit JSON are loosely typed by nature
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { decodeAction, encodeAction } from '../../src/channels/slack/codec.js';
import type { ApprovalChoice } from '../../src/contract/actions.js';
import { blockAction } from '../emulators/slack-payloads.js';
import type { EmuMessage } from '../emulators/slack.js';
import { deliveredCardRefs } from '../helpers/deliveries.js';
import { runs } from '../helpers/test-tools.js';
import { ADMIN, ALICE, BOB, type SlackStack, startSlackStack, visibleText, waitFor } from './stack.js';

/** The approval card in a thread (a message with an actions block of approval buttons). */
function approvalCardIn(stack: SlackStack, channel: string, threadTs: string): EmuMessage | undefined {
  return stack.emu
    .botMessages(channel, threadTs)
    .find((m) =>
      m.history[0]?.blocks?.some((b: any) => b.type === 'actions' && String(b.block_id).startsWith('approval:')),
    );
}

function buttons(m: EmuMessage): Array<{ action_id: string; value: string; style?: string; text: string }> {
  return (m.blocks ?? [])
    .filter((b: any) => b.type === 'actions')
    .flatMap((b: any) =>
      b.elements.map((e: any) => ({ action_id: e.action_id, value: e.value, style: e.style, text: e.text.text })),
    );
}

/** The approval id a card's buttons carry. */
function approvalIdOf(card: EmuMessage): string {
  const b = buttons(card)[0]!;
  const action = decodeAction(b.action_id, b.value);
  if (action?.kind !== 'approval') throw new Error(`not an approval button: ${b.action_id}=${b.value}`);
  return action.id;
}

/** Click a choice on an approval card, as the button for it is drawn (or for another approval id: a forged or stale button). */
async function click(
  stack: SlackStack,
  user: string,
  card: EmuMessage,
  choice: ApprovalChoice,
  id = approvalIdOf(card),
) {
  const { action_id, value } = encodeAction({ kind: 'approval', id, choice }, 0);
  return clickRaw(stack, user, card, action_id, value);
}

function clickRaw(stack: SlackStack, user: string, card: EmuMessage, actionId: string, value: string) {
  return stack.emu.deliver(
    'interactive',
    blockAction({ user, channel: card.channel, messageTs: card.ts, threadTs: card.thread_ts, actionId, value }),
  );
}

async function startApproval(stack: SlackStack, target = 'notes.txt') {
  stack.llm.push({ toolCalls: [{ name: 'danger', arguments: JSON.stringify({ target }) }] }, { text: 'all done' });
  const mention = stack.emu.userMessage({ channel: 'C1', user: ALICE, text: 'please touch it', mention: true });
  await stack.sendEvent(mention);
  const card = await waitFor(() => approvalCardIn(stack, 'C1', mention.ts), 'approval card');
  await waitFor(async () => {
    const row = await stack.core.db.selectFrom('approvals').select('id').executeTakeFirst();
    return row && deliveredCardRefs(stack.core.db, row.id);
  }, 'card delivered');
  return { mention, card };
}

describe.each(['http', 'socket'] as const)('Slack approvals (%s mode)', (mode) => {
  let stack: SlackStack;
  beforeEach(() => {
    runs.danger = 0;
  });
  afterEach(async () => {
    await stack?.close();
  });

  it('shows a Block Kit card; the requester approves and the tool runs', async () => {
    stack = await startSlackStack(mode);
    const { mention, card } = await startApproval(stack);
    expect(card.thread_ts).toBe(mention.ts);
    expect(visibleText(card)).toContain('danger notes.txt');
    expect(visibleText(card)).toContain('```\nwould touch notes.txt\n```');
    const approval = await stack.core.db.selectFrom('approvals').selectAll().executeTakeFirstOrThrow();
    expect(buttons(card)).toEqual([
      { action_id: 'sb_approval_0', value: `a:${approval.id}:y`, style: 'primary', text: '✅ Approve' },
      { action_id: 'sb_approval_1', value: `a:${approval.id}:n`, style: 'danger', text: '❌ Deny' },
      { action_id: 'sb_approval_2', value: `a:${approval.id}:s`, style: undefined, text: '🔁 This session' },
      {
        action_id: 'sb_approval_3',
        value: `a:${approval.id}:A`,
        style: undefined,
        text: '♾ Always: danger on notes.txt',
      },
    ]);
    expect(await deliveredCardRefs(stack.core.db, approval.id)).toEqual([card.ts]);

    const res = await click(stack, ALICE, card, 'once');
    expect(res.status).toBe(200);
    await waitFor(() => stack.findBot('C1', 'all done', mention.ts).length, 'final reply');
    expect(runs.danger).toBe(1);
    const updated = stack.emu.messagesIn('C1').find((m) => m.ts === card.ts)!;
    expect(visibleText(updated)).toContain(`*Approved* once by <@${ALICE}>`);
    expect(buttons(updated)).toEqual([]);
    await stack.quiesce();
    expect(stack.findBot('C1', 'all done')).toHaveLength(1);
  });

  it('tells another user with an ephemeral that they may not decide, and changes nothing', async () => {
    stack = await startSlackStack(mode);
    const { card } = await startApproval(stack);
    const before = card.history.length;
    const res = await click(stack, BOB, card, 'always');
    expect(res.status).toBe(200);
    const eph = await waitFor(() => stack.emu.ephemerals.find((e) => e.user === BOB), 'ephemeral to Bob');
    expect(eph.text).toContain('Only the person who started this turn');
    expect(eph.channel).toBe('C1');
    expect(eph.thread_ts).toBe(card.thread_ts);
    const row = await stack.core.db.selectFrom('approvals').selectAll().executeTakeFirstOrThrow();
    expect(row.status).toBe('pending');
    expect(await stack.core.db.selectFrom('approval_rules').selectAll().execute()).toHaveLength(0);
    expect(card.history.length).toBe(before);
    expect(runs.danger).toBe(0);
    // an admin may decide for the requester
    await click(stack, ADMIN, card, 'once');
    await waitFor(() => stack.findBot('C1', 'all done').length, 'final reply after admin approval');
    expect(runs.danger).toBe(1);
  });

  it('answers a second click on a decided card with "already decided"', async () => {
    stack = await startSlackStack(mode);
    const { card } = await startApproval(stack);
    const id = approvalIdOf(card);
    await click(stack, ALICE, card, 'once');
    await waitFor(() => stack.findBot('C1', 'all done').length, 'final reply');
    // a stale copy of the card (another client) still shows the buttons
    await click(stack, ALICE, card, 'deny', id);
    const eph = await waitFor(() => stack.emu.ephemerals.find((e) => e.user === ALICE), 'ephemeral');
    expect(eph.text).toContain(`already decided by <@${ALICE}>`);
    expect((await stack.core.db.selectFrom('approvals').select('status').executeTakeFirstOrThrow()).status).toBe(
      'approved',
    );
  });

  it('refuses clicks on unknown and expired approvals with an ephemeral', async () => {
    stack = await startSlackStack(mode, { overrides: { approvals: { timeout_seconds: 1 } } });
    const { card } = await startApproval(stack);
    const id = approvalIdOf(card);
    await click(stack, ALICE, card, 'once', 'no-such-approval');
    const unknown = await waitFor(() => stack.emu.ephemerals.find((e) => e.user === ALICE), 'ephemeral for unknown');
    expect(unknown.text).toContain("can't find this request");
    await waitFor(
      () =>
        visibleText(stack.emu.messagesIn('C1').find((m) => m.ts === card.ts)!).includes('*Expired* without a decision'),
      'card shows expiry',
    );
    expect(buttons(stack.emu.messagesIn('C1').find((m) => m.ts === card.ts)!)).toEqual([]);
    await click(stack, ALICE, card, 'once', id);
    const expired = await waitFor(
      () => stack.emu.ephemerals.filter((e) => e.user === ALICE)[1],
      'ephemeral for expired',
    );
    expect(expired.text).toContain('has expired');
    expect((await stack.core.db.selectFrom('approvals').select('status').executeTakeFirstOrThrow()).status).toBe(
      'expired',
    );
    expect(runs.danger).toBe(0);
  });

  it('denies with a note taken from the next thread reply', async () => {
    stack = await startSlackStack(mode);
    const { mention, card } = await startApproval(stack);
    await click(stack, ALICE, card, 'deny');
    await waitFor(
      () =>
        visibleText(stack.emu.messagesIn('C1').find((m) => m.ts === card.ts)!).includes(
          'Reply with a note for the model',
        ),
      'note prompt',
    );
    const withNote = stack.emu.messagesIn('C1').find((m) => m.ts === card.ts)!;
    expect(buttons(withNote).map((b) => b.value)).toEqual([`a:${approvalIdOf(card)}:x`]);
    await stack.sendEvent(
      stack.emu.userMessage({ channel: 'C1', user: ALICE, text: 'too risky today', threadTs: mention.ts }),
    );
    await waitFor(() => stack.findBot('C1', 'all done').length, 'final reply');
    const final = stack.emu.messagesIn('C1').find((m) => m.ts === card.ts)!;
    expect(visibleText(final)).toContain(`*Denied* by <@${ALICE}>`);
    expect(visibleText(final)).toContain('too risky today');
    expect(buttons(final)).toEqual([]);
    expect(runs.danger).toBe(0);
    const lastReq = JSON.stringify(stack.llm.chatRequests().at(-1)!.body.messages);
    expect(lastReq).toContain('too risky today');
  });

  it('denies without a note through the "No note" button', async () => {
    stack = await startSlackStack(mode);
    const { card } = await startApproval(stack);
    const id = approvalIdOf(card);
    await click(stack, ALICE, card, 'deny');
    await waitFor(
      () => buttons(stack.emu.messagesIn('C1').find((m) => m.ts === card.ts)!).length === 1,
      'No note button',
    );
    // only the requester may finish the denial
    await click(stack, BOB, card, 'no_note', id);
    await waitFor(() => stack.emu.ephemerals.find((e) => e.user === BOB), 'ephemeral to Bob');
    expect((await stack.core.db.selectFrom('approvals').select('status').executeTakeFirstOrThrow()).status).toBe(
      'awaiting_note',
    );
    await click(stack, ALICE, card, 'no_note', id);
    await waitFor(() => stack.findBot('C1', 'all done').length, 'final reply');
    const final = stack.emu.messagesIn('C1').find((m) => m.ts === card.ts)!;
    expect(visibleText(final)).toContain(`*Denied* by <@${ALICE}>`);
    expect(buttons(final)).toEqual([]);
    const row = await stack.core.db.selectFrom('approvals').selectAll().executeTakeFirstOrThrow();
    expect([row.status, row.note]).toEqual(['rejected', null]);
    expect(runs.danger).toBe(0);
  });

  it('answers a button with a malformed value with an ephemeral and changes nothing', async () => {
    stack = await startSlackStack(mode);
    const { card } = await startApproval(stack);
    await clickRaw(stack, ALICE, card, 'sb_answer_0', '{not json');
    const eph = await waitFor(() => stack.emu.ephemerals.find((e) => e.user === ALICE), 'ephemeral');
    expect(eph.text).toContain('This button is not mine or is outdated.');
    // A forged choice code, and a value whose kind differs from its action id, are refused the same way.
    await clickRaw(stack, ALICE, card, 'sb_approval_0', `a:${approvalIdOf(card)}:Z`);
    await clickRaw(stack, ALICE, card, 'sb_question_0', `a:${approvalIdOf(card)}:y`);
    const refusals = await waitFor(() => {
      const mine = stack.emu.ephemerals.filter((e) => e.user === ALICE);
      return mine.length === 3 ? mine : undefined;
    }, 'three refusals');
    expect(refusals.map((e) => e.text)).toEqual(Array(3).fill(eph.text));
    expect((await stack.core.db.selectFrom('approvals').select('status').executeTakeFirstOrThrow()).status).toBe(
      'pending',
    );
    expect(runs.danger).toBe(0);
  });

  it('still decides through a card posted before the value carried the compact action (old action id, value = approval id)', async () => {
    stack = await startSlackStack(mode);
    const { mention, card } = await startApproval(stack);
    await clickRaw(stack, ALICE, card, 'sb_approve_once', approvalIdOf(card));
    await waitFor(() => stack.findBot('C1', 'all done', mention.ts).length, 'final reply');
    expect(runs.danger).toBe(1);
    expect((await stack.core.db.selectFrom('approvals').select('status').executeTakeFirstOrThrow()).status).toBe(
      'approved',
    );
  });

  it('keeps a pending approval across a restart of the core in this process on the same database: the click works and the reply arrives once', async () => {
    stack = await startSlackStack(mode);
    const { mention, card } = await startApproval(stack);
    await stack.restart();
    const res = await click(stack, ALICE, card, 'once');
    expect(res.status).toBe(200);
    await waitFor(() => stack.findBot('C1', 'all done', mention.ts).length, 'final reply after restart');
    await stack.quiesce();
    expect(runs.danger).toBe(1);
    expect(stack.findBot('C1', 'all done')).toHaveLength(1);
    // the card from before the restart was updated, not re-posted
    const cards = stack.emu
      .botMessages('C1')
      .filter((m) => m.history[0]?.blocks?.some((b: any) => b.type === 'actions'));
    expect(cards).toHaveLength(1);
    expect(visibleText(cards[0]!)).toContain(`*Approved* once by <@${ALICE}>`);
  });
});
