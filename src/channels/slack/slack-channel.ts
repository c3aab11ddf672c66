/**
 * The Slack channel: a Bolt app on Socket Mode (when `slack.app_token` is set) or the HTTP Events
 * API on the shared server (`POST /slack/events`). Bolt routes events, clicks and the slash
 * command to the listener modules; what people see goes through the presenter's {@link SlackSurface}.
 */
import { App, LogLevel, type Receiver, type SocketModeReceiver, webApi } from '@slack/bolt';
import type { Logger } from 'pino';
import { errorMessage, SwitchboardError, InboundQueue, LinkHealth } from '../../kit/index.js';
import { CoreHolder, leveledSdkLogger } from '../../kit/index.js';
import type { Config, ChannelCore, PathPolicy, Channel, ChannelCapability } from '../../kit/index.js';
import type { ChannelBuildOptions } from '../../kit/index.js';
import { SlackApi } from './api.js';
import { normaliseApiUrl } from './doctor.js';
import { registerCommand } from './command.js';
import { DM_THREADS, type SlackContext } from './context.js';
import { RecordingSocketModeReceiver } from './ack-hold.js';
import { HttpRouteReceiver } from './http-receiver.js';
import { registerInbound } from './inbound.js';
import { registerInteractions } from './interactions.js';
import { SlackStreams } from './stream.js';
import { SlackSurface } from './surface.js';
import { TaskStreams } from './task-stream.js';

/** Options of {@link SlackChannel}. */
export interface SlackChannelOptions extends Pick<ChannelBuildOptions, 'config' | 'http' | 'log' | 'paths'> {
  /** Retries of the general client (reads, statuses, Bolt's calls; not delivery). Default 5, 0.5 s doubling to 30 s. */
  retryConfig?: webApi.RetryOptions;
  /** Longest Retry-After a delivery call waits out in place, seconds (default `SHORT_RETRY_AFTER_SECONDS`). */
  shortRetryAfterSeconds?: number;
}

const DEFAULT_RETRY: webApi.RetryOptions = {
  retries: 5,
  factor: 2,
  minTimeout: 500,
  maxTimeout: 30_000,
  randomize: true,
};
/** A Web API request that hangs longer than this fails (and is retried where safe). */
const REQUEST_TIMEOUT_MS = 30_000;
/** File uploads get longer: 50 MB over a slow uplink takes minutes. */
const UPLOAD_TIMEOUT_MS = 10 * 60_000;

/** Slack as a {@link Channel}. */
export class SlackChannel implements Channel, SlackContext {
  readonly name = 'slack';
  readonly capabilities: ReadonlySet<ChannelCapability> = new Set<ChannelCapability>(['attachments']);
  readonly api: SlackApi;
  readonly surface: SlackSurface;
  /** Slack's own streamed messages, or the fallback in force (`slack.streaming`). */
  readonly streams: SlackStreams;
  /** Tool progress as tasks of a streamed message where replies stream natively. */
  readonly taskStreams: TaskStreams;
  private readonly app: App;
  private readonly socket: SocketModeReceiver | null;
  readonly log: Logger;
  readonly config: Config['slack'];
  readonly paths: PathPolicy;
  private readonly held = new CoreHolder('slack');
  readonly inbound: InboundQueue;
  /** What health() reports: in Socket Mode it follows the socket. */
  private readonly link = new LinkHealth();

  /**
   * Socket Mode when `slack.app_token` is set, else the HTTP Events API on `POST /slack/events`.
   * @throws Error when `slack.bot_token` is missing, or HTTP mode lacks `slack.signing_secret`.
   */
  constructor(options: SlackChannelOptions) {
    const { config } = options;
    this.config = config.slack;
    this.paths = options.paths;
    this.log = options.log;
    this.inbound = new InboundQueue(this.log, 'slack: inbound message failed');
    if (!config.slack.bot_token) throw new Error('slack: slack.bot_token is required');
    const slackApiUrl = normaliseApiUrl(config.slack.api_url);
    // Bolt, the WebClient and the Socket Mode client read back the level they set (`@slack/logger`).
    const logger = leveledSdkLogger(this.log, LogLevel.INFO);
    const retryConfig = options.retryConfig ?? DEFAULT_RETRY;
    const clientOptions: webApi.WebClientOptions = { slackApiUrl, retryConfig, timeout: REQUEST_TIMEOUT_MS, logger };
    // Delivery calls retry nothing in the client: a 429 comes back at once with its Retry-After,
    // the surface waits out a short one, and the presenter owns every other retry (see surface.ts).
    const deliveryOptions: webApi.WebClientOptions = {
      ...clientOptions,
      retryConfig: { retries: 0 },
      rejectRateLimitedCalls: true,
    };

    let receiver: Receiver;
    if (config.slack.app_token) {
      this.socket = new RecordingSocketModeReceiver({
        appToken: config.slack.app_token,
        logger,
        autoReconnectEnabled: true,
        installerOptions: { clientOptions: { slackApiUrl } },
      });
      receiver = this.socket;
      this.link.watch(this.socket.client, {
        connected: 'up',
        reconnecting: { down: 'slack: Socket Mode reconnecting' },
        disconnected: { lost: 'slack: Socket Mode disconnected' },
      });
    } else {
      if (!config.slack.signing_secret) throw new Error('slack: slack.signing_secret is required for HTTP mode');
      this.socket = null;
      receiver = new HttpRouteReceiver({
        http: options.http,
        signingSecret: config.slack.signing_secret,
        log: this.log,
      });
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
    const deliveryClient = new webApi.WebClient(config.slack.bot_token, deliveryOptions);
    this.streams = new SlackStreams({
      config: config.slack,
      api: this.api,
      deliveryClient,
      log: this.log,
      shortRetryAfterSeconds: options.shortRetryAfterSeconds,
    });
    // Tool progress as tasks of a streamed message where replies stream natively (task-stream.ts).
    this.taskStreams = new TaskStreams({
      streams: this.streams,
      taskCards: () => this.surface.taskCards.inForce,
      log: this.log,
      shortRetryAfterSeconds: options.shortRetryAfterSeconds,
    });
    this.streams.beforeStart = (address) => this.taskStreams.close(address);
    this.surface = new SlackSurface({
      api: this.api,
      deliveryClient,
      taskStreams: this.taskStreams,
      streams: this.streams,
      uploadClient: new webApi.WebClient(config.slack.bot_token, { ...deliveryOptions, timeout: UPLOAD_TIMEOUT_MS }),
      log: this.log,
      dmThread: (slackChannel) => this.core.store.memo(DM_THREADS).get(slackChannel),
      config: config.slack,
      shortRetryAfterSeconds: options.shortRetryAfterSeconds,
    });

    registerInbound(this.app, this);
    registerInteractions(this.app, this);
    registerCommand(this.app, this);
    this.app.error(async (err) => {
      this.log.error({ err }, 'slack: listener failed');
    });
  }

  /** The core; throws before `start`. */
  get core(): ChannelCore {
    return this.held.get();
  }

  teamAllowed(teamId: string | undefined): boolean {
    return !this.config.team_id || teamId === this.config.team_id;
  }

  /**
   * Check the token (`auth.test`), then connect the socket or open the HTTP route.
   * @throws SwitchboardError `slack_start_failed` naming what Slack refused (e.g. `invalid_auth`).
   */
  async start(core: ChannelCore): Promise<void> {
    this.held.set(core);
    const auth = await this.app
      .init()
      .then(() => this.app.client.auth.test())
      .catch((err) => this.startFailed('bot token refused', 'the bot token (slack.bot_token) was refused', err));
    this.api.botUserId = String(auth.user_id ?? '');
    this.api.botId = String(auth.bot_id ?? '');
    this.api.teamId = String(auth.team_id ?? '');
    if (this.config.team_id && auth.team_id && auth.team_id !== this.config.team_id) {
      this.log.warn({ team: auth.team_id }, 'slack: the bot token belongs to another workspace than slack.team_id');
    }
    const connecting = this.socket ? 'Socket Mode could not connect (check slack.app_token)' : 'could not start';
    await this.app.start().catch((err) => this.startFailed('not connected', connecting, err));
    if (!this.socket) this.link.up();
    this.log.info({ mode: this.socket ? 'socket' : 'http', botUserId: this.api.botUserId }, 'slack: connected');
  }

  /** @throws SwitchboardError `slack_start_failed`: `what` went wrong (and why); health says the link is `down`. */
  private startFailed(down: string, what: string, err: unknown): never {
    this.link.down(`slack: ${down}`);
    throw new SwitchboardError('slack_start_failed', `slack: ${what}: ${errorMessage(err)}`, err);
  }

  /** Stop receiving; rendering already queued may finish. */
  async stop(): Promise<void> {
    this.link.down('slack: stopped');
    if (this.socket) await this.socket.client.disconnect().catch(() => undefined);
    else await this.app.stop();
    await this.inbound.drain();
  }

  /** Resolves once every inbound message received so far has been handed to the core (tests, shutdown). */
  settled(): Promise<void> {
    return this.inbound.settled();
  }

  health(): string | null {
    return this.link.problem;
  }
}
