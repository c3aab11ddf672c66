/**
 * A Bolt `Receiver` that takes Slack's HTTP requests from switchboard's shared {@link HttpServer}
 * (`POST /slack/events`) instead of opening its own server, as Bolt's HTTPReceiver would.
 *
 * It owns transport and the 3 s acknowledgement: verify the signature (bad or stale → 401),
 * answer `url_verification` and `ssl_check`, then hand the body to `app.processEvent()` with an
 * `ack` that writes the HTTP response. Listeners ack first and do their work afterwards; an Events
 * API request is answered once its message is recorded (see `ack-hold.ts`), so a crash never loses it.
 *
 * The shared server listens before the channel has started (it answers `url_verification` and
 * health checks meanwhile). A request that comes in during that start is held until the channel
 * runs (the route's {@link StartGate}), within Slack's 3 s, and then handled: answered 503
 * instead, a message on Slack's last retry would be lost. Only when the start takes longer than
 * that, or the channel is stopping, is it answered 503 (Slack retries; the stored de-duplication
 * keeps that safe).
 */
import type http from 'node:http';
import { type App, type Receiver, type ReceiverEvent, verifySlackRequest } from '@slack/bolt';
import type { Logger } from 'pino';
import type { HttpServer } from '../../http/server.js';
import { answerUnavailable, StartGate, settledWithin, webhookBody } from '../../http/webhook.js';
import { recordingOf } from './ack-hold.js';

/** Most a signed request's timestamp may differ from now, either way (Slack's own rule). */
export const MAX_SKEW_SECONDS = 300;

/** Slack gives an app 3 s; answer a little earlier if no listener acked (Slack would retry). */
const ACK_DEADLINE_MS = 2_500;
/** Longest a request that came in while the channel starts waits for it, ms (leaves time to handle it). */
export const START_HOLD_MS = 2_000;
/** Slack's bodies are small; interaction payloads stay well under this. */
const BODY_LIMIT = 1024 * 1024;

/** Options of {@link HttpRouteReceiver}. */
export interface HttpRouteReceiverOptions {
  http: HttpServer;
  signingSecret: string;
  log: Logger;
  /** Route path; defaults to `/slack/events` (Bolt's default, one path for everything). */
  path?: string;
}

function header(req: http.IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/** Parse a verified body: JSON events, form-encoded `payload=` interactions, form slash commands. */
export function parseSlackBody(raw: string, contentType: string | undefined): Record<string, unknown> {
  if ((contentType ?? '').startsWith('application/x-www-form-urlencoded')) {
    const form = new URLSearchParams(raw);
    const payload = form.get('payload');
    if (payload !== null) return JSON.parse(payload) as Record<string, unknown>;
    return Object.fromEntries(form);
  }
  return JSON.parse(raw) as Record<string, unknown>;
}

/** Receives Slack's HTTP requests on the shared server and feeds them to Bolt. */
export class HttpRouteReceiver implements Receiver {
  private app: App | null = null;
  /** Holds the requests that come in while the channel starts (within Slack's 3 s). */
  private readonly gate = new StartGate(START_HOLD_MS);

  constructor(private readonly options: HttpRouteReceiverOptions) {
    options.http.route(options.path ?? '/slack/events', (req, res) => this.handle(req, res));
  }

  init(app: App): void {
    this.app = app;
  }

  async start(): Promise<void> {
    this.gate.open();
  }

  async stop(): Promise<void> {
    this.gate.close();
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const { log } = this.options;
    const arrived = Date.now();
    const raw = await webhookBody(req, res, BODY_LIMIT, log);
    if (raw === undefined) return;
    const contentType = header(req, 'content-type');
    if (contentType?.startsWith('application/x-www-form-urlencoded') && new URLSearchParams(raw).get('ssl_check') === '1') {
      res.writeHead(200).end();
      return;
    }
    // Bolt's check refuses old timestamps only; a request dated ahead could be replayed for as
    // long as it is ahead. Either way, more than five minutes off is refused.
    const stamp = Number(header(req, 'x-slack-request-timestamp'));
    if (Number.isFinite(stamp) && Math.abs(Date.now() / 1000 - stamp) > MAX_SKEW_SECONDS) {
      log.warn({ skewSeconds: Math.round(stamp - Date.now() / 1000) }, 'slack: request timestamp more than 5 minutes off; refused');
      res.writeHead(401, { 'content-type': 'text/plain' }).end('request timestamp too far from now\n');
      return;
    }
    try {
      verifySlackRequest({
        signingSecret: this.options.signingSecret,
        body: raw,
        headers: {
          'x-slack-signature': header(req, 'x-slack-signature') ?? '',
          'x-slack-request-timestamp': Number(header(req, 'x-slack-request-timestamp')),
        },
      });
    } catch (err) {
      log.warn({ reason: (err as Error).message }, 'slack: request signature refused');
      res.writeHead(401, { 'content-type': 'text/plain' }).end('invalid signature\n');
      return;
    }
    let body: Record<string, unknown>;
    try {
      body = parseSlackBody(raw, contentType);
    } catch {
      res.writeHead(400, { 'content-type': 'text/plain' }).end('malformed body\n');
      return;
    }
    if (body.type === 'url_verification') {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ challenge: body.challenge }));
      return;
    }
    // Still starting: hold the request until the channel runs (within Slack's 3 s).
    if (!(await this.gate.admit(arrived)) || !this.app) {
      // Not started in time, or stopping: Slack retries later, and the stored de-duplication keeps that safe.
      log.warn({ heldMs: Date.now() - arrived, stopping: this.gate.isStopped }, 'slack: request came in before the channel ran; answered 503 so Slack retries');
      answerUnavailable(res, 'starting or stopping');
      return;
    }
    const app = this.app;
    let acked = false;
    const respond = (response: unknown) => {
      if (acked) return;
      acked = true;
      clearTimeout(deadline);
      if (response === undefined || response === null || response === '') res.writeHead(200).end();
      else if (typeof response === 'string') res.writeHead(200, { 'content-type': 'text/plain' }).end(response);
      else res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(response));
    };
    const deadline = setTimeout(() => {
      log.warn('slack: no listener acknowledged within the deadline; acknowledging empty');
      respond(undefined);
    }, Math.max(0, ACK_DEADLINE_MS - (Date.now() - arrived)));
    const retry = header(req, 'x-slack-retry-num');
    // Events are answered once recorded, not when Bolt acknowledges them (see ack-hold.ts).
    const holdsAck = body.type === 'event_callback';
    let ackRequested = false;
    let early: unknown;
    const event: ReceiverEvent = {
      body,
      retryNum: retry === undefined ? undefined : Number.parseInt(retry, 10),
      retryReason: header(req, 'x-slack-retry-reason'),
      ack: async (response?: unknown) => {
        if (!holdsAck) return respond(response);
        ackRequested = true;
        early = response;
      },
    };
    try {
      await app.processEvent(event);
    } catch (err) {
      log.error({ err }, 'slack: event processing failed');
      if (!acked) {
        acked = true;
        clearTimeout(deadline);
        res.writeHead(500).end();
      }
      return;
    }
    const recording = holdsAck ? recordingOf(body) : undefined;
    // Held until recorded, within Slack's deadline (past it, the deadline has answered already).
    if (recording) await settledWithin(recording, ACK_DEADLINE_MS - (Date.now() - arrived));
    if (holdsAck && ackRequested) respond(early);
    // No listener matched (e.g. an event type we do not handle): acknowledge so Slack does not retry.
    respond(undefined);
  }
}
