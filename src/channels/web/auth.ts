/**
 * Web sign-in: one-time login links, server-side sessions in an `HttpOnly`, `SameSite=Strict`
 * cookie (`Secure` behind HTTPS), a CSRF token per session, and the security headers every
 * response of the web chat carries. Only hashes of the link and cookie tokens are stored.
 */
import { createHash, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import type http from 'node:http';
import { insertLogin, insertSession, sessionByToken, touchSession, useLogin } from '../../kit/index.js';
import type { Config, Db, WebSession } from '../../kit/index.js';

/** The session cookie's name. */
export const COOKIE = 'sb_session';
/** A session's last-seen time is written at most this often. */
const TOUCH_EVERY_MS = 60_000;

const hash = (token: string) => createHash('sha256').update(token).digest('base64url');
const token = () => randomBytes(32).toString('base64url');

/** A user name: what follows `web:` in the principal. */
export function validUserName(name: string): boolean {
  return /^[\w.@-]{1,64}$/.test(name);
}

/** Where login links point: `web.public_url`, else the HTTP server's address. */
export function baseUrl(config: Config, port: number): string {
  if (config.web.public_url) return config.web.public_url.replace(/\/+$/, '');
  const host =
    config.http.host === '0.0.0.0' || config.http.host === '::' || config.http.host === ''
      ? '127.0.0.1'
      : config.http.host;
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
}

/**
 * Make a one-time login link.
 * @returns the URL to open (`<base>/login?token=…`) and when it expires.
 */
export async function createLoginLink(
  db: Db,
  base: string,
  opts: { user: string; admin: boolean; ttlMinutes: number },
): Promise<{ url: string; expiresAt: number }> {
  const t = token();
  const expiresAt = Date.now() + opts.ttlMinutes * 60_000;
  await insertLogin(db, { token_hash: hash(t), user_name: opts.user, admin: opts.admin, expires_at: expiresAt });
  return { url: `${base}/login?token=${t}`, expiresAt };
}

/** Use a link's token: a new session (with its cookie token), or undefined for a used, expired or unknown link. */
export async function redeemLogin(
  db: Db,
  linkToken: string,
  sessionDays: number,
): Promise<{ session: WebSession; cookieToken: string } | undefined> {
  const now = Date.now();
  const login = await useLogin(db, hash(linkToken), now);
  if (!login) return undefined;
  const cookieToken = token();
  const session: WebSession = {
    id: randomUUID().slice(0, 8),
    token_hash: hash(cookieToken),
    user_name: login.user_name,
    admin: login.admin,
    csrf: token(),
    created_at: now,
    last_seen_at: now,
    expires_at: now + sessionDays * 86_400_000,
  };
  await insertSession(db, session);
  return { session, cookieToken };
}

/** The cookies of a request. */
function cookies(req: http.IncomingMessage): Map<string, string> {
  const out = new Map<string, string>();
  for (const pair of (req.headers.cookie ?? '').split(';')) {
    const i = pair.indexOf('=');
    if (i > 0) out.set(pair.slice(0, i).trim(), pair.slice(i + 1).trim());
  }
  return out;
}

/** The live session of a request, if its cookie names one. */
export async function sessionOf(db: Db, req: http.IncomingMessage): Promise<WebSession | undefined> {
  const t = cookies(req).get(COOKIE);
  if (!t) return undefined;
  const s = await sessionByToken(db, hash(t), Date.now());
  if (s && Date.now() - s.last_seen_at > TOUCH_EVERY_MS) await touchSession(db, s.id, Date.now());
  return s;
}

/** Whether the request came over HTTPS (directly, or through a proxy saying so). */
export function isHttps(req: http.IncomingMessage): boolean {
  const proto = String(req.headers['x-forwarded-proto'] ?? '')
    .split(',')[0]
    ?.trim();
  return proto === 'https' || (req.socket as { encrypted?: boolean }).encrypted === true;
}

/** The `Set-Cookie` value of a session. */
export function sessionCookie(req: http.IncomingMessage, cookieToken: string, maxAgeSeconds: number): string {
  return `${COOKIE}=${cookieToken}; Path=/; HttpOnly; SameSite=Strict; Max-Age=${maxAgeSeconds}${isHttps(req) ? '; Secure' : ''}`;
}

/**
 * Whether a state-changing request carries the session's CSRF token (header `x-csrf-token`) and,
 * when the browser names one, comes from this origin.
 */
export function csrfOk(req: http.IncomingMessage, session: WebSession): boolean {
  const given = Buffer.from(String(req.headers['x-csrf-token'] ?? ''));
  const want = Buffer.from(session.csrf);
  if (given.length !== want.length || !timingSafeEqual(given, want)) return false;
  const origin = req.headers.origin;
  if (origin === undefined) return true;
  try {
    return new URL(origin).host === req.headers.host;
  } catch {
    return false;
  }
}

/** Headers of every web chat response: no inline script, no framing, no referrer leaks. */
export const SECURITY_HEADERS: Record<string, string> = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
    "font-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
  'cross-origin-opener-policy': 'same-origin',
  'cache-control': 'no-store',
};
