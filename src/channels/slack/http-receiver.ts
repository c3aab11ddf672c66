/**
 * A Bolt `Receiver` on the shared {@link HttpServer} (`POST /slack/events`) instead of a server of
 * its own. Per request it does what Bolt's HTTPReceiver does, with Bolt's pieces: verify the
 * signature, answer `ssl_check` and `url_verification`, hand the body to `app.processEvent()`
 * with an `ack` that writes the response (or an empty one at Slack's deadline). It adds a timestamp
 * refused when five minutes off either way and, for events, an answer only once the message is
 * recorded (`ack-hold.ts`); the kit's {@link WebhookRoute} adds the shared body cap and the start
 * gate (a request that comes in while the channel starts is held, within Slack's 3 s, not refused:
 * Slack's last retry must not be lost).
 */
import {
  type App,
  type BufferedIncomingMessage,
  HTTPModuleFunctions as bolt,
  HTTPResponseAck,
  LogLevel,
  type Logger as SlackLogger,
  type Receiver,
  type ReceiverEvent,
} from '@slack/bolt';
import type { Logger } from 'pino';
import { answerPlain, answerUnavailable, leveledSdkLogger, timestampSkew, WebhookRoute } from '../../kit/index.js';
import type { HttpServer, WebhookRouteOptions } from '../../kit/index.js';
import { eventAcks, HOLD_LIMIT_MS, holdEventAcks } from './ack-hold.js';

/** Most a signed request's timestamp may differ from now, either way (Slack's own rule). */
export const MAX_SKEW_SECONDS = 300;

/** Slack gives an app 3 s; answer a little earlier if no listener acked (Slack would retry). */
export const ACK_DEADLINE_MS = 2_500;
/** Longest a request that came in while the channel starts waits for it, ms (leaves time to handle it). */
export const START_HOLD_MS = 2_000;

/** Options of {@link HttpRouteReceiver}. */
export interface HttpRouteReceiverOptions {
  http: HttpServer;
  signingSecret: string;
  log: Logger;
  /**
   * The deadlines, ms: {@link ACK_DEADLINE_MS}, {@link START_HOLD_MS} and the event recording's
   * `HOLD_LIMIT_MS` (`ack-hold.ts`) unless given; tests give shorter ones so as not to wait them out.
   */
  deadlines?: { ackMs?: number; startHoldMs?: number; recordHoldMs?: number };
}

/** A request whose timestamp and signature passed (the request itself, its body buffered on it), with its parsed body. */
type Signed = { buffered: BufferedIncomingMessage; body: Record<string, unknown> };
type Route = WebhookRouteOptions<Signed>;

/** Receives Slack's HTTP requests on the shared server and feeds them to Bolt. */
export class HttpRouteReceiver implements Receiver {
  private app: App | null = null;
  private readonly route: WebhookRoute<Signed>;
  private readonly ackDeadlineMs: number;
  /** Where Bolt's acknowledgement logs. */
  private readonly logger: SlackLogger;

  constructor(private readonly options: HttpRouteReceiverOptions) {
    this.ackDeadlineMs = options.deadlines?.ackMs ?? ACK_DEADLINE_MS;
    this.logger = leveledSdkLogger(options.log, LogLevel.INFO);
    this.route = new WebhookRoute({
      http: options.http,
      // Bolt's default path, one for events, clicks and commands.
      path: '/slack/events',
      startHoldMs: options.deadlines?.startHoldMs ?? START_HOLD_MS,
      log: options.log,
      accept: this.accept,
      handle: this.handle,
    });
  }

  /** Events API requests are answered once their message is recorded (see `ack-hold.ts`). */
  init(app: App): void {
    this.app = holdEventAcks(app, this.options.deadlines?.recordHoldMs ?? HOLD_LIMIT_MS);
  }

  async start(): Promise<void> {
    this.route.open();
  }

  async stop(): Promise<void> {
    this.route.close();
  }

  /** Timestamp, signature, body; `ssl_check` and `url_verification` are answered here, started or not. */
  private readonly accept: Route['accept'] = async (req, res, raw) => {
    const { log } = this.options;
    // Bolt's functions read a body buffered on the request; it was read above, with the shared cap.
    const buffered: BufferedIncomingMessage = Object.assign(req, { rawBody: Buffer.from(raw) });
    // Bolt's check refuses old timestamps only; one dated ahead could be replayed while it is ahead.
    const skewSeconds = timestampSkew(req.headers['x-slack-request-timestamp'], MAX_SKEW_SECONDS);
    if (skewSeconds !== null) {
      log.warn({ skewSeconds }, 'slack: request timestamp more than 5 minutes off; refused');
      return answerPlain(res, 401, 'request timestamp too far from now');
    }
    try {
      // The signature (`ssl_check` carries none, and Bolt strips anything else from its body).
      await bolt.parseAndVerifyHTTPRequest({ signingSecret: this.options.signingSecret }, buffered);
    } catch (err) {
      log.warn({ reason: (err as Error).message }, 'slack: request signature refused');
      return answerPlain(res, 401, 'invalid signature');
    }
    let body: Record<string, unknown>;
    try {
      // JSON events, form-encoded `payload=` interactions, form slash commands.
      body = bolt.parseHTTPRequestBody(buffered);
    } catch {
      return answerPlain(res, 400, 'malformed body');
    }
    if (body.ssl_check === '1') return bolt.buildSSLCheckResponse(res);
    if (body.type === 'url_verification') return bolt.buildUrlVerificationResponse(res, body);
    return { buffered, body };
  };

  /** Hand an admitted request to Bolt with an `ack` that answers it. */
  private readonly handle: Route['handle'] = async ({ buffered, body }, res, arrived) => {
    const { log } = this.options;
    // Bolt hands the app over (`init`) before it starts the receiver, which opens the route.
    if (!this.app) return answerUnavailable(res, 'starting or stopping');
    const ack = new HTTPResponseAck({
      logger: this.logger,
      processBeforeResponse: false,
      httpRequest: buffered,
      httpRequestBody: body,
      httpResponse: res,
      unhandledRequestTimeoutMillis: Math.max(0, this.ackDeadlineMs - (Date.now() - arrived)),
      unhandledRequestHandler: () => {
        if (eventAcks.awaiting(body)) {
          // A 200 now would tell Slack the message is taken while it is not stored yet: a crash
          // before it is would lose it. Slack retries a 503; the retry is taken once.
          log.warn('slack: event not recorded within the deadline; answered 503 so Slack retries');
          answerEmpty(503);
          return;
        }
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
      retryNum: bolt.extractRetryNumFromHTTPRequest(buffered),
      retryReason: bolt.extractRetryReasonFromHTTPRequest(buffered),
    };
    try {
      await this.app.processEvent(event);
    } catch (err) {
      log.error({ err }, 'slack: event processing failed');
      return answerEmpty(500);
    }
    // An event whose recording ran out of time: Slack must send it again (see above).
    if (eventAcks.awaiting(body)) return answerEmpty(503);
    // No listener matched (e.g. an event type we do not handle): acknowledge so Slack does not retry.
    answerEmpty(200);
  };
}
