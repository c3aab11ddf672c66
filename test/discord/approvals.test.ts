/** Discord cards: approvals and questions decided by button, a refused tap, a forged custom_id, deny with a note. */
import { afterEach, describe, expect, it } from 'vitest';
import { encodeCustomId } from '../../src/channels/discord/codec.js';
import { runs } from '../helpers/test-tools.js';
import {
  alice,
  bob,
  button,
  type DiscordStack,
  labels,
  startDiscordStack,
  waitFor,
  waitForCard,
  waitForMessage,
} from './stack.js';

let s: DiscordStack | null = null;
afterEach(async () => {
  await s?.close();
  s = null;
});

const approval = (db: DiscordStack['h']['core']['db']) =>
  db.selectFrom('approvals').selectAll().executeTakeFirstOrThrow();

describe('discord: cards', () => {
  it('the requester approves by button: acknowledged at once, the tool runs, the card shows who', async () => {
    s = await startDiscordStack();
    const before = runs.danger ?? 0;
    s.llm.push({ toolCalls: [{ name: 'danger', arguments: '{"target":"x.txt"}' }] }, { text: 'done touching' });
    s.emu.dm(alice, 'touch x.txt');
    const dm = s.emu.dmChannel(alice).id;
    const card = await waitForCard(s.emu, dm, 'approval card');
    expect(card.content).toContain('danger x.txt');
    expect(labels(card)).toEqual([
      ['✅ Approve', '❌ Deny'],
      ['🔁 This session', '♾ Always: danger on x.txt'],
    ]);
    const tap = s.emu.click(alice, card.id, button(card, 'Approve'));
    await waitForMessage(s.emu, dm, (c) => c === 'done touching', 'final reply');
    expect(tap.callbacks).toEqual([{ type: 6 }]);
    expect((runs.danger ?? 0) - before).toBe(1);
    await waitFor(() => card.components.length === 0, 'buttons removed');
    expect(card.content).toContain('Approved');
    expect(card.content).toContain('by Alice');
  });

  it('in a thread a tap by someone else is refused to them alone; the requester denies with a note', async () => {
    s = await startDiscordStack();
    const before = runs.danger ?? 0;
    s.llm.push({ toolCalls: [{ name: 'danger', arguments: '{"target":"y.txt"}' }] }, { text: 'ok, I will not' });
    const opening = s.emu.guildMessage(alice, s.emu.guildChannel().id, 'touch y.txt', true);
    const card = await waitForCard(s.emu, opening.id, 'approval card in the thread');
    const refused = s.emu.click(bob, card.id, button(card, 'Approve'));
    await waitFor(() => refused.followups.length === 1, 'refusal to bob');
    expect(refused.followups[0]?.flags).toBe(64);
    expect(refused.followups[0]?.content).toMatch(/not allowed|only/i);
    expect((await approval(s.h.core.db)).status).toBe('pending');
    expect(card.edits).toBe(0);

    s.emu.click(alice, card.id, button(card, 'Deny'));
    await waitFor(() => card.content.includes('Reply with a note for the model'), 'card waiting for a note');
    expect(labels(card).flat()).toContain('No note');
    s.emu.guildMessage(alice, opening.id, 'use the other file instead');
    await waitForMessage(s.emu, opening.id, (c) => c === 'ok, I will not', 'reply after the denial');
    expect(await approval(s.h.core.db)).toMatchObject({ status: 'rejected', note: 'use the other file instead' });
    expect((runs.danger ?? 0) - before).toBe(0);
  });

  it('a forged or foreign custom_id changes nothing and is told to the tapper', async () => {
    s = await startDiscordStack();
    s.llm.push({ toolCalls: [{ name: 'danger', arguments: '{"target":"z.txt"}' }] }, { text: 'fine' });
    s.emu.dm(alice, 'touch z.txt');
    const dm = s.emu.dmChannel(alice).id;
    const card = await waitForCard(s.emu, dm);
    const foreign = s.emu.click(alice, card.id, 'someone-elses-button');
    const forged = s.emu.click(alice, card.id, encodeCustomId({ kind: 'approval', id: 'no-such-row', choice: 'once' }));
    await waitFor(() => foreign.followups.length === 1 && forged.followups.length === 1, 'both refused');
    expect(foreign.followups[0]?.content).toBe('This button is not mine or is outdated.');
    expect(foreign.callbacks).toEqual([{ type: 6 }]);
    expect((await approval(s.h.core.db)).status).toBe('pending');
  });

  it('a question is answered by a button of its card', async () => {
    s = await startDiscordStack();
    s.llm.push(
      {
        toolCalls: [
          {
            name: 'ask_user_clarification',
            arguments: JSON.stringify({ question: 'Which colour?', suggested_answers: ['red', 'blue'] }),
          },
        ],
      },
      { text: 'blue it is' },
    );
    s.emu.dm(alice, 'paint it');
    const dm = s.emu.dmChannel(alice).id;
    const card = await waitForCard(s.emu, dm, 'question card');
    expect(card.content).toContain('Which colour?');
    expect(labels(card).flat()).toEqual(['red', 'blue']);
    s.emu.click(alice, card.id, button(card, 'blue'));
    await waitForMessage(s.emu, dm, (c) => c === 'blue it is', 'answer after the choice');
    const tool = s.llm
      .chatRequests()
      .at(-1)
      ?.body.messages.find((m: { role: string }) => m.role === 'tool');
    expect(JSON.stringify(tool)).toContain('blue');
  });
});
