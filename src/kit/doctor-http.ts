/**
 * The HTTP call behind channels' doctor checks (plain HTTPS, no SDK): every failure names the
 * host and the cause in words.
 */
import { networkCause } from '../errors.js';

/** The fields the doctor checks read from platform replies (getMe, auth.test, …). */
export interface PlatformReply {
  ok?: boolean;
  description?: string;
  error?: unknown;
  result?: { username?: string };
  user?: string;
  user_id?: string;
  team?: string;
  team_id?: string;
}

/** A reply's error field in words: Slack sends a string; anything else is shown as JSON. */
export function errorText(value: unknown): string {
  if (typeof value === 'string' && value) return value;
  if (value === undefined || value === null) return 'no error given';
  return JSON.stringify(value);
}

/** POST/GET `url`; a failure to connect or a reply that is not JSON throws, naming the host. */
export async function callPlatform(
  url: string,
  init: RequestInit = {},
): Promise<{ status: number; body: PlatformReply }> {
  const host = new URL(url).host;
  let res: Response;
  try {
    res = await fetch(url, { ...init, signal: AbortSignal.timeout(10_000) });
  } catch (err) {
    throw new Error(`cannot reach ${host}: ${networkCause(err)}`);
  }
  const text = await res.text();
  try {
    return { status: res.status, body: JSON.parse(text) as PlatformReply };
  } catch {
    throw new Error(
      `${host} answered HTTP ${res.status} with something that is not a JSON API reply (is the API address right?)`,
    );
  }
}
