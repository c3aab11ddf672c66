/**
 * What a user's turns cost: the endpoint's reported tokens per request (`model_usage`), the
 * `/usage` answer and the optional daily limit (`access.daily_tokens_per_user`).
 */
import type { Config } from '../config.js';
import type { Db } from '../store/db.js';
import { tokensSince } from '../store/repos/usage.js';

/** Midnight UTC of the day of `now`. */
export function startOfUtcDay(now: number): number {
  const d = new Date(now);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate());
}

/** The first of the month (UTC) of `now`. */
export function startOfUtcMonth(now: number): number {
  const d = new Date(now);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
}

const fmt = (n: number) => n.toLocaleString('en-US');

/** The `/usage` answer: a user's tokens today and this month (UTC), and the daily limit if any. */
export async function usageText(db: Db, config: Config, requester: string, now = Date.now()): Promise<string> {
  const [day, month] = await Promise.all([
    tokensSince(db, requester, startOfUtcDay(now)),
    tokensSince(db, requester, startOfUtcMonth(now)),
  ]);
  const line = (label: string, u: { prompt: number; completion: number }) =>
    `${label}: ${fmt(u.prompt + u.completion)} tokens (${fmt(u.prompt)} prompt, ${fmt(u.completion)} completion)`;
  const limit = config.access.daily_tokens_per_user;
  const lines = [line('Today (UTC)', day), line('This month', month)];
  if (limit > 0) lines.push(`Daily limit: ${fmt(limit)} tokens.`);
  return lines.join('\n');
}

/**
 * Why a new turn of `requester` may not run today, or null: their tokens today reached
 * `access.daily_tokens_per_user`. Admins are never refused.
 */
export async function dailyLimitRefusal(
  db: Db,
  config: Config,
  requester: string,
  isAdmin: boolean,
  now = Date.now(),
): Promise<string | null> {
  const limit = config.access.daily_tokens_per_user;
  if (limit <= 0 || isAdmin) return null;
  const used = await tokensSince(db, requester, startOfUtcDay(now));
  if (used.prompt + used.completion < limit) return null;
  return `You have used your ${fmt(limit)} tokens for today (access.daily_tokens_per_user); the limit resets at midnight UTC. /usage shows your figures.`;
}
