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

/**
 * {@link callPlatform}, insisting on `ok`: a refusal throws `<host> refused <what>: <error>
 * (HTTP <status>)` and the `hint` for that status (which setting to check), so every channel's
 * doctor says a refusal the same way.
 * @returns the reply, when `ok`.
 */
export async function callPlatformOk(
  url: string,
  init: RequestInit,
  what: string,
  hint: (status: number) => string = () => '',
): Promise<PlatformReply> {
  const { status, body } = await callPlatform(url, init);
  if (body.ok) return body;
  const cause = body.description ?? errorText(body.error);
  throw new Error(`${new URL(url).host} refused ${what}: ${cause} (HTTP ${status})${hint(status)}`);
}
