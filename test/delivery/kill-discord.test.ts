/**
 * Kill tests against the Discord emulator: `switchboard start` runs as a child process, is
 * SIGKILLed mid-answer and at a card, then started again over the same database. The answer is
 * finished in the message already shown (nothing lost, doubled or left half-written), and a card's
 * button from before the kill still decides.
 */
import { describe, expect, it } from 'vitest';
import { type DiscordEmulator, startDiscordEmulator } from '../emulators/discord.js';
import { heldSlowAnswer, type KillChannel, killBudget, useKillWorld, waitFor } from '../helpers/kill-harness.js';
import { answerFor } from '../helpers/kill-model.js';

const alice = { id: '111', username: 'alice', global_name: 'Alice' };

/** Discord: ready once the process's gateway session is open, gone once it closed. */
const discord: KillChannel<DiscordEmulator> = {
  start: () => startDiscordEmulator(),
  env: (emu) => ({
    DISCORD_BOT_TOKEN: emu.token,
    DISCORD_API_ROOT: emu.apiRoot,
    DISCORD_GATEWAY_URL: emu.gatewayUrl,
    DISCORD_ALLOWED_USERS: alice.id,
  }),
  connected: (emu) => emu.sockets() > 0,
  disconnected: (emu) => emu.sockets() === 0,
  close: (emu) => emu.close(),
};

const world = useKillWorld(discord, { prefix: 'sb-kill-dc', toml: '[discord]\nstream_interval_ms = 100\n' });

const dm = () => world().emu.dmChannel(alice).id;
const answers = () =>
  world()
    .emu.botMessages(dm())
    .filter((m) => m.content.startsWith('Answ'))
    .map((m) => m.content);

describe('discord: SIGKILL at the awkward moments of delivery', () => {
  // Two starts; waits: the first words, the stream recorded, the final judgement (2).
  it('mid-answer: the restarted answer finishes the message already shown', {
    timeout: killBudget(2, 5),
  }, async () => {
    const { emu, llm, start, kill, streamRecorded, expectExactly } = world();
    const slow = heldSlowAnswer({ stopAt: 24 });
    llm.setHandler(slow.model);
    const first = await start();
    emu.dm(alice, 'slow q');
    const fragment = await waitFor(
      () => emu.botMessages(dm()).find((m) => m.content.startsWith('Answ')),
      'the first words posted',
    );
    await streamRecorded(fragment.id);
    await kill(first);

    await start();
    await expectExactly(answers, [answerFor('slow q')]);
    expect(
      emu
        .botMessages(dm())
        .filter((m) => m.content.startsWith('Answ'))
        .map((m) => m.id),
    ).toEqual([fragment.id]);
  });

  // Two starts; waits: the card, the final judgement (2).
  it('at a card: after the restart the old button still approves, and the answer comes once', {
    timeout: killBudget(2, 4),
  }, async () => {
    const { emu, start, kill, expectExactly } = world();
    const first = await start();
    emu.dm(alice, 'approve it');
    const card = await waitFor(() => emu.botMessages(dm()).find((m) => m.components.length > 0), 'the card');
    await kill(first);

    await start();
    const approve = card.components
      .flatMap((r) => r.components)
      .find((c) => String(c.label).includes('Approve'))?.custom_id;
    const tap = emu.click(alice, card.id, String(approve));
    await expectExactly(answers, [answerFor('approve it')]);
    expect(tap.callbacks).toEqual([{ type: 6 }]);
    expect(emu.botMessages(dm()).filter((m) => m.components.length > 0)).toEqual([]);
    expect(card.content).toContain('Approved');
  });
});
