/** Telegram's sending limits, for the shared pacer (`../pacer.ts`). */
import type { Limit, Rate } from '../../kit/index.js';

/** Telegram's limits: ≈1 message/s per chat, 20/min in a group, ≈30/s per bot. */
export const TELEGRAM_RATES = {
  chat: { intervalMs: 1_000, burst: 5 },
  group: { intervalMs: 3_000, burst: 20 },
  bot: { intervalMs: 1_000 / 30, burst: 1 },
} as const satisfies Record<string, Rate>;

/** The limits a Telegram send to `chatId` falls under (negative ids are groups and channels). */
export function telegramLimits(chatId: number | string): Limit[] {
  const id = String(chatId);
  const limits: Limit[] = [
    { key: 'bot', rate: TELEGRAM_RATES.bot },
    { key: `chat:${id}`, rate: TELEGRAM_RATES.chat },
  ];
  if (id.startsWith('-')) limits.push({ key: `group:${id}`, rate: TELEGRAM_RATES.group });
  return limits;
}
