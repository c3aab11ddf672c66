/**
 * A server's questions in Telegram, through the Bot API emulator, against server-everything over
 * stdio: a sampling approval tapped (and a tap by someone else refused), a URL elicitation's Done,
 * and a form field answered by a typed reply, refused once with the reason, then cancelled.
 */
import { afterAll, describe, expect, it, onTestFailed } from 'vitest';
import {
  alice,
  bob,
  button,
  startTelegramTest,
  type TelegramTest,
  texts,
  waitFor,
  waitForText,
} from '../telegram/setup.js';
import { everythingStdio } from './reference-servers.js';

// Starting Telegram's emulator, a core and server-everything costs seconds: the tests share one,
// each in the same chat but reading only the cards, requests and button answers after it began.
let t: TelegramTest | undefined;
let firstRequest = 0;
let firstCallback = 0;
/** Close the shared setup; a test that failed leaves it to be started anew, not reused. */
async function closeShared() {
  const s = t;
  t = undefined;
  await s?.close();
}
afterAll(closeShared);

/** The shared setup; what its model and buttons see from here on is this test's. */
async function start() {
  t ??= await startTelegramTest({
    overrides: {
      mcp: { servers: { ev: everythingStdio() } },
      approvals: { rules: [{ tool: 'mcp__*', action: 'allow' }] },
    },
    telegram: { allowed_users: `${alice.id},${bob.id}` },
  });
  await waitFor(() => t?.h.core.registry.get('mcp__ev__trigger-sampling-request'), 'conditional tools', 15_000);
  firstRequest = t.llm.chatRequests().length;
  onTestFailed(closeShared);
  firstCallback = t.emu.callbackAnswers.length;
  return t;
}
/** This test's requests to the model. */
const requests = (tt: TelegramTest) => tt.llm.chatRequests().slice(firstRequest);
/** This test's answers to button taps. */
const callbackAnswers = (tt: TelegramTest) => tt.emu.callbackAnswers.slice(firstCallback);

/** The newest message with buttons whose text contains `text`. */
const cardWith = (tt: TelegramTest, text: string) =>
  waitFor(
    () => texts(tt.emu, alice.id).findLast((m) => m.reply_markup?.inline_keyboard?.length && m.plain.includes(text)),
    `card "${text}"`,
    15_000,
  );
const toolResult = (tt: TelegramTest, round: number) =>
  requests(tt)
    [round]?.body.messages.filter((m: any) => m.role === 'tool')
    .at(-1)?.content ?? '';

describe('MCP server requests in Telegram', () => {
  it('asks before sampling; only the requester taps Allow; the answer goes to the server', async () => {
    const tt = await start();
    tt.llm.push({ toolCalls: [{ name: 'mcp__ev__trigger-sampling-request', arguments: '{"prompt":"a haiku"}' }] });
    tt.emu.sendText(alice, 'sample please');
    const card = await cardWith(tt, 'wants to ask the model');
    expect(card.plain).toContain('🔌 MCP server "ev" wants to ask the model (at most 100 tokens)');
    expect(card.plain).toContain('User: Resource trigger-sampling-request context: a haiku');
    tt.emu.tap(bob, alice.id, card.message_id, button(card, 'Allow'));
    await waitFor(() => callbackAnswers(tt).length > 0, 'the refusal');
    expect(callbackAnswers(tt).at(-1)?.show_alert).toBe(true);
    expect(requests(tt)).toHaveLength(1);
    tt.llm.push({ text: 'autumn moon' }, { text: 'sampled it' });
    tt.emu.tap(alice, alice.id, card.message_id, button(card, 'Allow'));
    await waitForText(tt.emu, alice.id, (p) => p === 'sampled it', 'final reply', 20_000);
    expect(toolResult(tt, 2)).toContain('"text": "autumn moon"');
    await waitFor(() => !card.reply_markup, 'buttons removed');
  });

  it('shows a URL elicitation with the link and Done', async () => {
    const tt = await start();
    tt.llm.push(
      { toolCalls: [{ name: 'mcp__ev__trigger-url-elicitation', arguments: '{"url":"https://example.org/consent"}' }] },
      { text: 'linked' },
    );
    tt.emu.sendText(alice, 'link');
    const card = await cardWith(tt, 'https://example.org/consent');
    expect(card.plain).toContain('Open it only if you trust the server "ev"');
    tt.emu.tap(alice, alice.id, card.message_id, button(card, 'Done'));
    await waitForText(tt.emu, alice.id, (p) => p === 'linked', 'final reply', 20_000);
    expect(toolResult(tt, 1)).toContain('✅ User completed the URL elicitation flow.');
  });

  it('takes a typed reply for a form field, refuses an invalid one with the reason, and Cancel ends the form', async () => {
    const tt = await start();
    tt.llm.push(
      { toolCalls: [{ name: 'mcp__ev__trigger-elicitation-request', arguments: '{}' }] },
      { text: 'form over' },
    );
    tt.emu.sendText(alice, 'form');
    await cardWith(tt, 'Your full, legal name');
    tt.emu.sendText(alice, 'Ada');
    const check = await cardWith(tt, 'Agree to the terms');
    tt.emu.tap(alice, alice.id, check.message_id, button(check, 'Yes'));
    const first = await cardWith(tt, 'Favorite first line');
    tt.emu.tap(alice, alice.id, first.message_id, button(first, 'Skip'));
    await cardWith(tt, 'Your email address');
    tt.emu.sendText(alice, 'nope');
    const again = await cardWith(tt, 'Not accepted: "nope" is not an email address');
    tt.emu.tap(alice, alice.id, again.message_id, button(again, 'Cancel'));
    await waitForText(tt.emu, alice.id, (p) => p === 'form over', 'final reply', 20_000);
    expect(toolResult(tt, 1)).toContain('⚠️ User cancelled the elicitation dialog.');
  });
});
