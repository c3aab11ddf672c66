/**
 * A Bolt `Receiver` that takes Slack's HTTP requests from switchboard's shared {@link HttpServer}
 * (`POST /slack/events`) instead of opening its own server, as Bolt's HTTPReceiver would.
 *
 * It does what Bolt's HTTPReceiver does per request, with Bolt's own pieces (`HTTPModuleFunctions`
 * and `HTTPResponseAck`): verify the signature, answer `ssl_check` and `url_verification`, then
 * hand the body to `app.processEvent()` with an `ack` that writes the HTTP response, or answers
 * empty when no listener acknowledged within Slack's deadline. Around that it adds what the shared
 * server and switchboard need: the body cap of the shared webhooks, a timestamp refused when more
 * than five minutes off either way, and an Events API request answered only once its message is
 * recorded, as over Socket Mode (see `ack-hold.ts`), so a crash never loses it.
 *
 * The shared server listens before the channel has started (it answers `url_verification` and
 * health checks meanwhile). A request that comes in during that start is held until the channel
 * runs (the route's {@link StartGate}), within Slack's 3 s, and then handled: answered 503
 * instead, a message on Slack's last retry would be lost. Only when the start takes longer than
 * that, or the channel is stopping, is it answered 503 (Slack retries; the stored de-duplication
 * keeps that safe).
 */
import type http from 'node:http';
import { type App, type BufferedIncomingMessage, HTTPModuleFunctions as bolt, HTTPResponseAck, type Logger as SlackLogger, type Receiver, type ReceiverEvent } from '@slack/bolt';
import type { Logger } from 'pino';
import type { HttpServer } from '../../http/server.js';
import { answerUnavailable, StartGate, webhookBody } from '../../http/webhook.js';
import { holdEventAcks } from './ack-hold.js';
import { boltLogger } from './bolt-logger.js';

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

/** Receives Slack's HTTP requests on the shared server and feeds them to Bolt. */
export class HttpRouteReceiver implements Receiver {
  private app: App | null = null;
  /** Holds the requests that come in while the channel starts (within Slack's 3 s). */
  private readonly gate = new StartGate(START_HOLD_MS);
  /** Where Bolt's acknowledgement logs. */
  private readonly logger: SlackLogger;

  constructor(private readonly options: HttpRouteReceiverOptions) {
    this.logger = boltLogger(options.log);
    options.http.route(options.path ?? '/slack/events', (req, res) => this.handle(req, res));
  }

  /** Events API requests are answered once their message is recorded (see `ack-hold.ts`). */
  init(app: App): void {
    this.app = holdEventAcks(app);
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
    // Bolt's functions read a body buffered on the request; it was read above, with the shared cap.
    const buffered: BufferedIncomingMessage = Object.assign(req, { rawBody: Buffer.from(raw) });
    // Bolt's check refuses old timestamps only; a request dated ahead could be replayed for as
    // long as it is ahead. Either way, more than five minutes off is refused.
    const stamp = Number(req.headers['x-slack-request-timestamp']);
    if (Number.isFinite(stamp) && Math.abs(Date.now() / 1000 - stamp) > MAX_SKEW_SECONDS) {
      log.warn({ skewSeconds: Math.round(stamp - Date.now() / 1000) }, 'slack: request timestamp more than 5 minutes off; refused');
      res.writeHead(401, { 'content-type': 'text/plain' }).end('request timestamp too far from now\n');
      return;
    }
    try {
      // The signature (`ssl_check` carries none, and Bolt strips anything else from its body).
      await bolt.parseAndVerifyHTTPRequest({ signingSecret: this.options.signingSecret }, buffered);
    } catch (err) {
      log.warn({ reason: (err as Error).message }, 'slack: request signature refused');
      res.writeHead(401, { 'content-type': 'text/plain' }).end('invalid signature\n');
      return;
    }
    let body: Record<string, unknown>;
    try {
      // JSON events, form-encoded `payload=` interactions, form slash commands.
      body = bolt.parseHTTPRequestBody(buffered);
    } catch {
      res.writeHead(400, { 'content-type': 'text/plain' }).end('malformed body\n');
      return;
    }
    if (body.ssl_check === '1') return bolt.buildSSLCheckResponse(res);
    if (body.type === 'url_verification') return bolt.buildUrlVerificationResponse(res, body);
    // Still starting: hold the request until the channel runs (within Slack's 3 s).
    if (!(await this.gate.admit(arrived)) || !this.app) {
      // Not started in time, or stopping: Slack retries later, and the stored de-duplication keeps that safe.
      log.warn({ heldMs: Date.now() - arrived, stopping: this.gate.isStopped }, 'slack: request came in before the channel ran; answered 503 so Slack retries');
      answerUnavailable(res, 'starting or stopping');
      return;
    }
    const ack = new HTTPResponseAck({
      logger: this.logger,
      processBeforeResponse: false,
      httpRequest: buffered,
      httpRequestBody: body,
      httpResponse: res,
      unhandledRequestTimeoutMillis: Math.max(0, ACK_DEADLINE_MS - (Date.now() - arrived)),
      unhandledRequestHandler: () => {
        log.warn('slack: no listener acknowledged within the deadline; acknowledging empty');
        answerEmpty(200);
      },
    });
    const answerEmpty = (status: number) => {
      ack.ack();
      if (!res.headersSent) bolt.buildNoBodyResponse(res, status);
    };
    const answer = ack.bind();
    const event: ReceiverEvent = {
      body,
      // Once the deadline has answered, a late acknowledgement has nothing left to answer.
      ack: async (response?: unknown) => {
        if (!res.headersSent) await answer(response);
      },
      retryNum: bolt.extractRetryNumFromHTTPRequest(req),
      retryReason: bolt.extractRetryReasonFromHTTPRequest(req),
    };
    try {
      await this.app.processEvent(event);
    } catch (err) {
      log.error({ err }, 'slack: event processing failed');
      answerEmpty(500);
      return;
    }
    // No listener matched (e.g. an event type we do not handle): acknowledge so Slack does not retry.
    answerEmpty(200);
  }
}
