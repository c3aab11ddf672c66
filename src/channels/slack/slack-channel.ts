/**
 * The Slack channel: a Bolt app whose receiver is Socket Mode (when `slack.app_token` is set) or
 * the HTTP Events API on the shared server (`POST /slack/events`, signature checked). Bolt routes
 * events, button clicks and the slash command to small listener modules; what people must see
 * reaches Slack through the presenter, which drives the {@link SlackSurface}.
 */
import { App, type Receiver, type SocketModeReceiver, webApi } from '@slack/bolt';
import type { Logger } from 'pino';
import type { Config } from '../../config.js';
import { errorMessage, SwitchboardError } from '../../errors.js';
import type { CoreApi } from '../../contract/core.js';
import type { HttpServer } from '../../http/server.js';
import type { Conversation } from '../../store/schema.js';
import type { PathPolicy } from '../../tools/path-policy.js';
import type { Channel, ChannelCapability } from '../../contract/channel.js';
import { InboundQueue } from '../inbound-queue.js';
import { SlackApi } from './api.js';
import { boltLogger } from './bolt-logger.js';
import { registerCommand } from './command.js';
import type { SlackContext } from './context.js';
import { RecordingSocketModeReceiver } from './ack-hold.js';
import { HttpRouteReceiver } from './http-receiver.js';
import { registerInbound } from './inbound.js';
import { registerInteractions } from './interactions.js';
import { type SlackAddress, SlackSurface } from './surface.js';

/** Options of {@link SlackChannel}. */
export interface SlackChannelOptions {
  config: Config;
  http: HttpServer;
  log: Logger;
  paths: PathPolicy;
  /**
   * Retry policy of the general client (reads, statuses, Bolt's own calls; not delivery, which
   * the presenter retries). Default: 5 retries, 0.5 s doubling to 30 s; tests pass short timeouts.
   */
  retryConfig?: webApi.RetryOptions;
}

const DEFAULT_RETRY: webApi.RetryOptions = { retries: 5, factor: 2, minTimeout: 500, maxTimeout: 30_000, randomize: true };
/** A Web API request that hangs longer than this fails (and is retried where safe). */
const REQUEST_TIMEOUT_MS = 30_000;
/** File uploads get longer: 50 MB over a slow uplink takes minutes. */
const UPLOAD_TIMEOUT_MS = 10 * 60_000;
/** How long `stop` waits for inbound messages being handed to the core, ms. */
const STOP_DRAIN_MS = 5_000;

/** `SLACK_API_URL` with or without a trailing slash; the WebClient wants one. */
export function normaliseApiUrl(url: string | undefined): string | undefined {
  return url ? url.replace(/\/+$/, '') + '/' : undefined;
}

/** Slack as a {@link Channel}. */
export class SlackChannel implements Channel {
  readonly name = 'slack';
  readonly capabilities: ReadonlySet<ChannelCapability> = new Set<ChannelCapability>(['attachments']);
  readonly api: SlackApi;
  readonly surface: SlackSurface;
  private readonly app: App;
  private readonly socket: SocketModeReceiver | null;
  private readonly log: Logger;
  private readonly config: Config['slack'];
  private core_: CoreApi | null = null;
  /** DM channel → assistant thread its replies go to ('' = top level); also kept as a setting for restarts. */
  private readonly dmThreads = new Map<string, string>();
  private readonly inbound: InboundQueue;
  private problem: string | null = 'not started';

  /**
   * Socket Mode when `slack.app_token` is set, else the HTTP Events API on `POST /slack/events`.
   * @throws Error when `slack.bot_token` is missing, or HTTP mode lacks `slack.signing_secret`.
   */
  constructor(private readonly options: SlackChannelOptions) {
    const { config } = options;
    this.config = config.slack;
    // main.ts already binds `channel: slack` on this logger.
    this.log = options.log;
    this.inbound = new InboundQueue(this.log, 'slack: inbound message failed');
    if (!config.slack.bot_token) throw new Error('slack: slack.bot_token is required');
    const slackApiUrl = normaliseApiUrl(config.slack.api_url);
    const logger = boltLogger(this.log);
    const retryConfig = options.retryConfig ?? DEFAULT_RETRY;
    const clientOptions: webApi.WebClientOptions = { slackApiUrl, retryConfig, timeout: REQUEST_TIMEOUT_MS, logger };
    // Delivery calls retry nothing in the client: a 429 comes back at once with its Retry-After,
    // the surface waits out a short one, and the presenter owns every other retry (see surface.ts).
    const deliveryOptions: webApi.WebClientOptions = { ...clientOptions, retryConfig: { retries: 0 }, rejectRateLimitedCalls: true };

    let receiver: Receiver;
    if (config.slack.app_token) {
      this.socket = new RecordingSocketModeReceiver({
        appToken: config.slack.app_token,
        logger,
        autoReconnectEnabled: true,
        installerOptions: { clientOptions: { slackApiUrl } },
      });
      receiver = this.socket;
      this.socket.client.on('connected', () => {
        this.problem = null;
      });
      this.socket.client.on('reconnecting', () => {
        this.problem = 'slack: Socket Mode reconnecting';
      });
      this.socket.client.on('disconnected', () => {
        if (this.problem === null) this.problem = 'slack: Socket Mode disconnected';
      });
    } else {
      if (!config.slack.signing_secret) throw new Error('slack: slack.signing_secret is required for HTTP mode');
      this.socket = null;
      receiver = new HttpRouteReceiver({ http: options.http, signingSecret: config.slack.signing_secret, log: this.log });
    }
    this.app = new App({
      token: config.slack.bot_token,
      receiver,
      logger,
      clientOptions,
      deferInitialization: true,
      ignoreSelf: true,
      // Conversation state lives in the database; Bolt's in-memory store would only grow.
      convoStore: false,
    });
    this.api = new SlackApi(this.app.client);
    this.surface = new SlackSurface({
      api: this.api,
      deliveryClient: new webApi.WebClient(config.slack.bot_token, deliveryOptions),
      uploadClient: new webApi.WebClient(config.slack.bot_token, { ...deliveryOptions, timeout: UPLOAD_TIMEOUT_MS }),
      log: this.log,
      address: (conv) => this.address(conv),
      streamIntervalMs: config.slack.stream_interval_ms,
      maxUploadBytes: config.slack.max_upload_bytes,
    });

    const ctx = this.context();
    registerInbound(this.app, ctx);
    registerInteractions(this.app, ctx);
    registerCommand(this.app, ctx);
    this.app.error(async (err) => {
      this.log.error({ err }, 'slack: listener failed');
    });
  }

  private get core(): CoreApi {
    if (!this.core_) throw new Error('slack: channel not started');
    return this.core_;
  }

  private context(): SlackContext {
    const self = this;
    return {
      get core() {
        return self.core;
      },
      api: this.api,
      surface: this.surface,
      config: this.config,
      log: this.log,
      paths: this.options.paths,
      teamAllowed: (teamId) => !self.config.team_id || teamId === self.config.team_id,
      rememberDmThread: (slackChannel, threadTs) => {
        if (self.dmThreads.get(slackChannel) === threadTs) return;
        self.dmThreads.set(slackChannel, threadTs);
        self.core
          .setSetting(`slack.dm_thread.${slackChannel}`, threadTs)
          .catch((err: unknown) => self.log.warn({ err }, 'slack: could not save the DM thread'));
      },
      enqueueInbound: (key, work) => self.inbound.run(key, work),
    };
  }

  /**
   * Check the token (`auth.test`), then connect the socket or open the HTTP route.
   * @throws SwitchboardError `slack_start_failed` naming what Slack refused (e.g. `invalid_auth`).
   */
  async start(core: CoreApi): Promise<void> {
    this.core_ = core;
    try {
      await this.app.init();
      const auth = await this.app.client.auth.test();
      this.api.botUserId = String(auth.user_id ?? '');
      this.api.botId = String(auth.bot_id ?? '');
      if (this.config.team_id && auth.team_id && auth.team_id !== this.config.team_id) {
        this.log.warn({ team: auth.team_id }, 'slack: the bot token belongs to another workspace than slack.team_id');
      }
    } catch (err) {
      this.problem = 'slack: bot token refused';
      throw new SwitchboardError('slack_start_failed', `slack: the bot token (slack.bot_token) was refused: ${errorMessage(err)}`, err);
    }
    try {
      await this.app.start();
    } catch (err) {
      this.problem = 'slack: not connected';
      const what = this.socket ? 'Socket Mode could not connect (check slack.app_token)' : 'could not start';
      throw new SwitchboardError('slack_start_failed', `slack: ${what}: ${errorMessage(err)}`, err);
    }
    if (!this.socket) this.problem = null;
    this.log.info({ mode: this.socket ? 'socket' : 'http', botUserId: this.api.botUserId }, 'slack: connected');
  }

  /** Stop receiving; rendering already queued may finish. */
  async stop(): Promise<void> {
    this.problem = 'slack: stopped';
    if (this.socket) await this.socket.client.disconnect().catch(() => undefined);
    else await this.app.stop();
    await this.inbound.drain(STOP_DRAIN_MS);
  }

  /** Resolves once every inbound message received so far has been handed to the core (tests, shutdown). */
  settled(): Promise<void> {
    return this.inbound.settled();
  }

  health(): string | null {
    return this.problem;
  }

  /**
   * Where a conversation's messages go: its thread, or for a DM the assistant thread the user
   * last wrote in (kept as a setting, so a restart still answers there).
   */
  private async address(conv: Conversation): Promise<SlackAddress> {
    if (!conv.thread_key && !this.dmThreads.has(conv.chat_key)) {
      const saved = await this.core.getSetting(`slack.dm_thread.${conv.chat_key}`).catch(() => undefined);
      if (!this.dmThreads.has(conv.chat_key)) this.dmThreads.set(conv.chat_key, saved ?? '');
    }
    const threadTs = conv.thread_key || this.dmThreads.get(conv.chat_key) || undefined;
    return { slackChannel: conv.chat_key, threadTs, assistantThread: !conv.thread_key && !!threadTs };
  }
}
