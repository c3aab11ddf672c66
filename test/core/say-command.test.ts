/**
 * The kit's command glue: `sayCommand` runs a table command through `core.command` and says its answer in the chat
 * it was typed in, through the delivery ledger under the typed message's key — so a redelivered
 * command answers once — with its buttons; `omitEchoed` leaves out an answer the turn's end says.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Channel, ChannelCapability } from '../../src/contract/channel.js';
import type { ChatRef } from '../../src/contract/chat.js';
import type { CommandPlace } from '../../src/contract/command.js';
import { sayAnswer, sayCommand } from '../../src/kit/command-answer.js';
import { FakeSurface } from '../delivery/fake-surface.js';
import { type Harness, startHarness, waitFor } from '../helpers/harness.js';

/** A channel whose messages are shown on a fake surface. */
class ShownChannel implements Channel {
  readonly name = 'test';
  readonly capabilities: ReadonlySet<ChannelCapability> = new Set<ChannelCapability>();
  readonly surface = new FakeSurface(10, 10_000);
  async start(): Promise<void> {}
  async stop(): Promise<void> {}
}

describe('sayCommand', () => {
  let h: Harness | undefined;
  let channel = new ShownChannel();
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  const placeOf = (ref: ChatRef, by = 'test:u1'): CommandPlace => {
    const chat = { channel: ref.channel, chatKey: ref.chatKey, threadKey: ref.threadKey ?? '' };
    return { by, chat, ref: chat, shared: false, spell: (n) => `/${n}` };
  };

  it('says the answer in the chat once per key, and returns it', async () => {
    channel = new ShownChannel();
    h = await startHarness({ channels: () => [channel] });
    const ref = { channel: 'test', chatKey: 'c1', threadKey: '' };
    await h.send('hello', { chatKey: 'c1' });
    await h.core.idle();
    const before = channel.surface.shown().length;
    const answer = await sayCommand(h.core, 'help', '', placeOf(ref), 'command:update-1');
    expect(answer.markdown).toContain('/help');
    const shown = await waitFor(
      () =>
        channel.surface
          .shown()
          .slice(before)
          .find((t) => t.includes('Commands')),
      'the answer',
    );
    expect(shown).toContain('/new');
    // The same key again (a redelivered update): no second message.
    await sayCommand(h.core, 'help', '', placeOf(ref), 'command:update-1');
    await h.core.idle();
    expect(
      channel.surface
        .shown()
        .slice(before)
        .filter((t) => t.includes('Commands')),
    ).toHaveLength(1);
  });

  it('omitEchoed leaves out an answer the turn’s own end says (a stopped turn); without it the answer is said', async () => {
    channel = new ShownChannel();
    h = await startHarness({ channels: () => [channel] });
    const ref = { channel: 'test', chatKey: 'c2', threadKey: '' };
    await h.send('hello', { chatKey: 'c2' });
    await h.core.idle();
    const before = channel.surface.ops('post').length;
    const echoed = { markdown: '⏹ Stopped.', echoedByEvents: true };
    await sayAnswer(h.core, placeOf(ref).chat, echoed, 'command:k-omitted', { omitEchoed: true });
    await h.core.idle();
    expect(channel.surface.ops('post').length).toBe(before);
    await sayAnswer(h.core, placeOf(ref).chat, echoed, 'command:k-said');
    await waitFor(() => channel.surface.shown().some((t) => t.includes('Stopped')), 'the said answer');
  });
});
