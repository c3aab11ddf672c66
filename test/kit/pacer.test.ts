import { describe, expect, it } from 'vitest';
import { Pacer, type PacerClock } from '../../src/kit/pacer.js';
import { TELEGRAM_RATES, telegramLimits } from '../../src/channels/telegram/rates.js';

/** A clock that jumps to the next sleeper's wake-up once everything else has settled. */
function fakeClock(): PacerClock & { t: number; drive(done: () => boolean): Promise<void> } {
  let sleepers: Array<{ until: number; resolve: () => void }> = [];
  const settle = async () => {
    for (let i = 0; i < 10; i++) await new Promise((r) => setImmediate(r));
  };
  const c = {
    t: 0,
    now: () => c.t,
    sleep: (ms: number) => new Promise<void>((resolve) => sleepers.push({ until: c.t + ms, resolve })),
    async drive(done: () => boolean) {
      for (;;) {
        await settle();
        if (done()) return;
        if (sleepers.length === 0) continue;
        const next = Math.min(...sleepers.map((s) => s.until));
        c.t = next;
        const due = sleepers.filter((s) => s.until <= next);
        sleepers = sleepers.filter((s) => s.until > next);
        for (const s of due) s.resolve();
      }
    },
  };
  return c;
}

/** Send `n` messages to each chat, one chat's messages one after another, chats concurrently. */
async function sendAll(
  pacer: Pacer,
  clock: ReturnType<typeof fakeClock>,
  chats: number[],
  n: number,
): Promise<Array<{ chat: number; at: number }>> {
  const sent: Array<{ chat: number; at: number }> = [];
  const chains = chats.map(() => Promise.resolve());
  // Interleave as a real sender does: each chat a serial queue, all chats at once.
  for (let i = 0; i < n; i++) {
    chats.forEach((chat, k) => {
      chains[k] = (chains[k] as Promise<void>).then(async () => {
        await pacer.take(telegramLimits(chat));
        sent.push({ chat, at: clock.now() });
      });
    });
  }
  let finished = false;
  const all = Promise.all(chains).then(() => {
    finished = true;
  });
  await clock.drive(() => finished);
  await all;
  return sent;
}

/** Most sends inside any window of `ms` starting at a send. */
function maxInWindow(times: number[], ms: number): number {
  const sorted = [...times].sort((a, b) => a - b);
  let best = 0;
  for (let i = 0, j = 0; i < sorted.length; i++) {
    while ((sorted[j] as number) <= (sorted[i] as number) - ms) j++;
    best = Math.max(best, i - j + 1);
  }
  return best;
}

describe('Pacer (GCRA) on a fake clock', () => {
  it('one chat: a burst of 5, then one message per second', async () => {
    const clock = fakeClock();
    const pacer = new Pacer(clock);
    const sent = await sendAll(pacer, clock, [42], 10);
    // The first five go at once (spaced only by the bot-wide 1/30 s), then one per second.
    expect(sent.map((s) => Math.round(s.at))).toEqual([0, 33, 67, 100, 133, 1000, 2000, 3000, 4000, 5000]);
  });

  it('a group: at most 20 per minute', async () => {
    const clock = fakeClock();
    const pacer = new Pacer(clock);
    const sent = await sendAll(pacer, clock, [-100123], 45);
    expect(
      maxInWindow(
        sent.map((s) => s.at),
        60_000,
      ),
    ).toBeLessThanOrEqual(TELEGRAM_RATES.group.burst + 60_000 / TELEGRAM_RATES.group.intervalMs);
    expect(
      maxInWindow(
        sent.map((s) => s.at),
        1_000,
      ),
    ).toBeLessThanOrEqual(5);
    expect(sent.at(-1)?.at).toBeGreaterThanOrEqual(60_000);
  });

  it('many chats: never over 30 per second for the bot, each chat at most ~1/s', async () => {
    const clock = fakeClock();
    const pacer = new Pacer(clock);
    const chats = Array.from({ length: 200 }, (_, i) => 1000 + i);
    const sent = await sendAll(pacer, clock, chats, 3);
    expect(sent).toHaveLength(600);
    // One send every 1/30 s for the bot, bursts included (a window holds both its ends).
    expect(
      maxInWindow(
        sent.map((s) => s.at),
        1_000,
      ),
    ).toBeLessThanOrEqual(31);
    for (const chat of chats.slice(0, 5))
      expect(
        maxInWindow(
          sent.filter((s) => s.chat === chat).map((s) => s.at),
          1_000,
        ),
      ).toBeLessThanOrEqual(5);
    // 600 sends at 30/s take about 19 s, not more: queuing, not stalling.
    expect(Math.max(...sent.map((s) => s.at))).toBeLessThan(21_000);
  });
});
