/**
 * `POST /api/notify`: a notification from outside (a backup script, CI). JSON `{to?, text,
 * title?}` with `Authorization: Bearer $SWITCHBOARD_API_TOKEN`. Answers: 202 queued, 400 bad
 * body, 401 no or wrong token (compared in constant time), 404 while no token is configured,
 * 405 not POST, 413 body over the cap, 422 unknown or unserved target.
 * An `Idempotency-Key` header makes a retried request deliver once.
 */
import { randomUUID } from 'node:crypto';
import type http from 'node:http';
import { z } from 'zod';
import { readBody } from '../http/server.js';
import { sameSecret } from '../http/webhook.js';
import { formatChatRef } from './home.js';
import { MAX_OUTSIDE_TEXT, resolveOutsideTargets } from './outside.js';
import type { JobService } from './service.js';

/** Largest request body, bytes. */
export const NOTIFY_BODY_LIMIT = 64 * 1024;

const bodySchema = z.object({
  to: z.string().min(1).max(200).optional(),
  text: z.string().trim().min(1).max(MAX_OUTSIDE_TEXT),
  title: z.string().trim().min(1).max(120).optional(),
});

function reply(
  res: http.ServerResponse,
  status: number,
  body: Record<string, unknown>,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(`${JSON.stringify(body)}\n`);
}

/** Compare a presented bearer token with the configured one without leaking where they differ. */
export function tokenMatches(header: string | undefined, expected: string): boolean {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
  return m !== null && sameSecret(m[1], expected);
}

/** The route handler, bound to a job service. */
export function notifyRoute(
  service: JobService,
): (req: http.IncomingMessage, res: http.ServerResponse) => Promise<void> {
  return async (req, res) => {
    const core = service.host;
    const token = core.config.http.api_token;
    if (!token) return reply(res, 404, { error: 'the notify API is disabled: set SWITCHBOARD_API_TOKEN' });
    if (req.method !== 'POST') return reply(res, 405, { error: 'use POST' }, { allow: 'POST' });
    if (!tokenMatches(req.headers.authorization, token))
      return reply(res, 401, { error: 'missing or wrong bearer token' }, { 'www-authenticate': 'Bearer' });
    let raw: Buffer;
    try {
      raw = await readBody(req, NOTIFY_BODY_LIMIT);
    } catch {
      return reply(res, 413, { error: `body over ${NOTIFY_BODY_LIMIT} bytes` });
    }
    let json: unknown;
    try {
      json = JSON.parse(raw.toString('utf8'));
    } catch {
      return reply(res, 400, { error: 'body is not JSON' });
    }
    const parsed = bodySchema.safeParse(json);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      return reply(res, 400, { error: `${issue?.path.join('.') || 'body'}: ${issue?.message ?? 'invalid'}` });
    }
    const { to, text, title } = parsed.data;
    const served = core
      .listChannels()
      .map((c) => c.name)
      .filter((n) => n !== 'job');
    const resolved = await resolveOutsideTargets(core.db, core.config, to, served);
    if (!resolved.ok) return reply(res, 422, { error: resolved.reason });
    const header = req.headers['idempotency-key'];
    const key = typeof header === 'string' && /^[\w.:-]{1,128}$/.test(header) ? header : randomUUID();
    for (const target of resolved.targets) {
      const conversationId = await service.sink.conversationFor(target);
      await service.sink.send(conversationId, {
        text,
        title,
        source: 'api',
        key: `notify:api:${key}:${formatChatRef(target)}`,
      });
    }
    reply(res, 202, { ok: true, to: resolved.targets.map(formatChatRef) });
  };
}
