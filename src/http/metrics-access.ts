/**
 * Who may read `GET /metrics`. The numbers say who uses the bot and how (conversations, tools,
 * models, failures), so they are not public: with `http.api_token` set, the request needs
 * `Authorization: Bearer <token>`; without one, only a client on this machine's loopback, reached
 * directly (a request a proxy forwarded says so in its headers and is refused: the proxy's own
 * connection comes from loopback too).
 */
import type http from 'node:http';
import { sameSecret } from './webhook.js';

/** Headers a reverse proxy adds: a request with one of them came from somewhere else. */
const FORWARDED = ['forwarded', 'x-forwarded-for', 'x-real-ip'];

/** Whether a socket's peer address is loopback (127.0.0.0/8, ::1, or 127.x mapped into IPv6). */
export function isLoopbackAddress(address: string | undefined): boolean {
  if (!address) return false;
  const v4 = address.startsWith('::ffff:') ? address.slice('::ffff:'.length) : address;
  return v4.startsWith('127.') || address === '::1';
}

/** A refusal of a metrics request: status, message and headers. */
export interface MetricsRefusal {
  status: 401 | 403;
  message: string;
  headers: Record<string, string>;
}

/**
 * Why a request may not read the metrics, or null when it may.
 * @param token `http.api_token`; unset: loopback clients only.
 */
export function metricsRefusal(req: http.IncomingMessage, token: string | undefined): MetricsRefusal | null {
  if (token) {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '');
    if (m && sameSecret(m[1], token)) return null;
    return {
      status: 401,
      message: 'metrics need Authorization: Bearer <http.api_token>\n',
      headers: { 'www-authenticate': 'Bearer' },
    };
  }
  const forwarded = FORWARDED.some((h) => req.headers[h] !== undefined);
  if (isLoopbackAddress(req.socket.remoteAddress) && !forwarded) return null;
  return {
    status: 403,
    message: 'metrics answer loopback clients only while http.api_token is unset\n',
    headers: {},
  };
}
