/**
 * The approval card end to end on Telegram (the Bot API emulator, the real channel, a real
 * bash): a command too long for a card arrives whole as a document before its card, the card
 * shows the hidden second line as a line and says where the rest is, and approving runs exactly
 * that command. When Telegram refuses the document, the card offers Deny alone.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { visibleText } from '../../src/delivery/visible.js';
import { bashTool } from '../../src/tools/builtins/bash.js';
import {
  alice,
  button,
  startTelegramTest,
  type TelegramTest,
  waitFor,
  waitForCard,
  waitForText,
} from '../telegram/setup.js';
import { hostileCommand, RAW_HIDDEN } from './hostile-args.js';

let t: TelegramTest | null = null;
afterEach(async () => {
  await t?.close();
  t = null;
});

const COMMAND = hostileCommand(5000);

function preview(): string {
  const parsed = bashTool.parse({ command: COMMAND });
  if (!parsed.ok) throw new Error(parsed.error);
  return bashTool.preview?.(parsed.value) ?? '';
}

const buttons = (card: { reply_markup?: { inline_keyboard: Array<Array<{ text: string }>> } }) =>
  (card.reply_markup?.inline_keyboard ?? []).flat().map((b) => b.text);

describe('telegram: the card is the command', () => {
  it('sends the whole arguments as a document before the card, and approving runs exactly them', async () => {
    t = await startTelegramTest({ tools: [bashTool] });
    t.llm.push({ toolCalls: [{ name: 'bash', arguments: JSON.stringify({ command: COMMAND }) }] }, { text: 'ran it' });
    t.emu.sendText(alice, 'list the files');
    const card = await waitForCard(t.emu, alice.id, 'approval card');
    const documents = t.emu.messages(alice.id).filter((m) => m.kind === 'document');
    expect(documents).toHaveLength(1);
    const doc = documents[0]!;
    // The file comes first: whoever reads the card has the whole text above it.
    expect(doc.message_id).toBeLessThan(card.message_id);
    expect(doc.file?.name).toMatch(/^approval-[0-9a-f]{8}-arguments\.txt$/);
    const text = doc.file!.bytes.toString('utf8');
    expect(text.endsWith(`\n${visibleText(preview())}\n`)).toBe(true);
    expect(text).toContain('echo tail-ran > tail.txt');
    expect(text).not.toMatch(RAW_HIDDEN);

    expect(card.plain.length).toBeLessThanOrEqual(4096);
    expect(card.plain).toContain(
      '\n$ ls -la   # list files only; the rest is a comment:\ntouch pwned.txt⟨TAB⟩# ⟨U+202E RLO⟩',
    );
    expect(card.plain).toMatch(/⟨… [\d ]+ more characters on 2 lines not shown on this card⟩/);
    expect(card.plain).toContain(`the whole arguments are in the file ${doc.file!.name} sent just before it`);
    expect(card.text).not.toMatch(RAW_HIDDEN);
    expect(buttons(card)[0]).toBe('✅ Approve');

    t.emu.tap(alice, alice.id, card.message_id, button(card, 'Approve'));
    await waitForText(t.emu, alice.id, (p) => p === 'ran it', 'final reply');
    const ws = path.join(t.dir, 'workspace');
    expect(existsSync(path.join(ws, 'pwned.txt'))).toBe(true);
    expect(readFileSync(path.join(ws, 'tail.txt'), 'utf8')).toBe('tail-ran\n');
    // The card's update keeps the file above it and sends nothing more.
    await waitFor(() => !card.reply_markup, 'buttons removed');
    expect(t.emu.messages(alice.id).filter((m) => m.kind === 'document')).toHaveLength(1);
  });

  it('a document Telegram refuses leaves a card that offers Deny alone, and nothing runs', async () => {
    t = await startTelegramTest({ tools: [bashTool] });
    t.emu.fail('sendDocument', 1, { status: 400, description: 'Bad Request: file refused' });
    t.llm.push({ toolCalls: [{ name: 'bash', arguments: JSON.stringify({ command: COMMAND }) }] }, { text: 'denied' });
    t.emu.sendText(alice, 'list the files');
    const card = await waitForCard(t.emu, alice.id, 'approval card');
    expect(t.emu.messages(alice.id).filter((m) => m.kind === 'document')).toHaveLength(0);
    expect(buttons(card)).toEqual(['❌ Deny']);
    expect(card.plain).toContain('could not be sent here (sendDocument: 400 Bad Request: file refused)');
    expect(card.plain).toContain('Approving is not offered');
    t.emu.tap(alice, alice.id, card.message_id, button(card, 'Deny'));
    await waitFor(() => card.plain.includes('Reply with a note'), 'asks for a note');
    t.emu.tap(alice, alice.id, card.message_id, button(card, 'No note'));
    await waitForText(t.emu, alice.id, (p) => p === 'denied', 'final reply');
    expect(existsSync(path.join(t.dir, 'workspace', 'pwned.txt'))).toBe(false);
  });
});
