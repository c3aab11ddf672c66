/**
 * The Telegram channel: a grammY bot receiving by long polling (`@grammyjs/runner`, ordered per
 * chat and topic, concurrent across chats) or by webhook on the shared HTTP server. What people
 * must see reaches Telegram through the presenter, which drives the {@link TelegramSurface}.
 */
import type http from 'node:http';
import { type RunnerHandle, run, sequentialize } from '@grammyjs/runner';
import { Bot } from 'grammy';
import type { Update } from 'grammy/types';
import type { Logger } from 'pino';
import {
  ConfigError,
  CoreHolder,
  SwitchboardError,
  answerPlain,
  sameSecret,
  WebhookRoute,
  InboundQueue,
  Pacer,
} from '../../kit/index.js';
import type { BackgroundRetry } from '../../kit/index.js';
import type {
  ChannelBuildOptions,
  ChatRef,
  ChannelCore,
  Election,
  Channel,
  ChannelCapability,
} from '../../kit/index.js';
import { botFetch } from './bot-fetch.js';
import { pacingTransformer, retryTransformer } from './api.js';
import { MENU_RETRY_MS, registerMenu } from './command-menu.js';
import { botCommands } from './commands.js';
import { CHANNEL, addressOfContext, refOf } from './context.js';
import { telegramEmitter } from './emitter.js';
import { TelegramEphemeral } from './ephemeral.js';
import { type BotIdentity, inboundComposer } from './inbound.js';
import { UpdateJournal } from './journal.js';
import { TelegramRich } from './rich.js';
import { TelegramSurface } from './surface.js';

/** Options of {@link createTelegramChannel}. */
export interface TelegramChannelOptions extends Pick<ChannelBuildOptions, 'config' | 'http' | 'log' | 'paths'> {
  /** First pause before a failed command-menu registration is tried again, ms (default {@link MENU_RETRY_MS}). */
  commandMenuRetryMs?: number;
  /** Longest `retry_after` a delivery call waits out in place, seconds (default `SHORT_RETRY_AFTER_SECONDS`). */
  shortRetryAfterSeconds?: number;
}

/** `stopped_message_generation`: a person pressed Stop on a draft. */
const ALLOWED_UPDATES = ['message', 'callback_query', 'stopped_message_generation'] as const;
/** Longest an update posted while the channel starts waits for it, ms (Telegram posts it again later). */
const START_HOLD_MS = 5_000;
/** First pause before a polling loop that ended (409, network) is started again, ms; doubles to {@link POLL_RESTART_MAX_MS}. */
const POLL_RESTART_MS = 1_000;
const POLL_RESTART_MAX_MS = 60_000;
/** Pause between fence checks that could not confirm the poller lease (the database failed), ms. */
const FENCE_RETRY_MS = 250;

/** The Telegram {@link Channel}. */
export class TelegramChannel implements Channel {
  readonly name = CHANNEL;
  readonly capabilities: ReadonlySet<ChannelCapability> = new Set<ChannelCapability>(['attachments', 'voice']);

  private readonly bot: Bot;
  private readonly log: Logger;
  readonly surface: TelegramSurface;
  private readonly journal: UpdateJournal;
  private readonly core = new CoreHolder(CHANNEL);
  private runner: RunnerHandle | null = null;
  private election: Election | null = null;
  /** The election this instance polls under (set as polling starts, which is inside `elect`). */
  private pollElection: Election | null = null;
  private restartTimer: NodeJS.Timeout | null = null;
  private restartDelayMs = POLL_RESTART_MS;
  private menu: BackgroundRetry | null = null;
  private started = false;
  /** The webhook route (with `telegram.webhook_url`): holds updates posted while the channel starts. */
  private readonly webhook: WebhookRoute<{ raw: string }> | null = null;
  private pollError: string | null = null;
  private me: BotIdentity = { id: 0, username: '' };
  /** Updates being handled (ordered per chat and topic by grammY's `sequentialize`). */
  private readonly inbound: InboundQueue;
  /** Paces sends under Telegram's limits (exposed for metrics and benchmarks). */
  readonly pacer = new Pacer();

  constructor(private readonly options: TelegramChannelOptions) {
    const { config } = options;
    const token = config.telegram.bot_token;
    if (!token)
      throw new ConfigError('config: telegram.bot_token (env TELEGRAM_BOT_TOKEN): required for the Telegram channel');
    const secret = config.telegram.webhook_secret;
    if (config.telegram.webhook_url && (!secret || !/^[A-Za-z0-9_-]{1,256}$/.test(secret))) {
      // Telegram's setWebhook would refuse it at start; say so plainly before anything connects.
      throw new ConfigError(
        'config: telegram.webhook_secret (env TELEGRAM_WEBHOOK_SECRET): use 1-256 characters from A-Z, a-z, 0-9, _ and -',
      );
    }
    this.log = options.log;
    this.bot = new Bot(token, {
      client: { apiRoot: config.telegram.api_root.replace(/\/+$/, ''), fetch: botFetch as typeof fetch },
    });
    this.journal = new UpdateJournal(() => this.core.get().store.journal, this.log);
    this.inbound = new InboundQueue(this.log, 'telegram: update failed');
    // Order matters: the journal sees a batch only after retries produced it.
    this.bot.api.config.use(this.journal.transformer());
    if (config.telegram.pace_sends) this.bot.api.config.use(pacingTransformer(this.pacer));
    this.bot.api.config.use(retryTransformer(options.shortRetryAfterSeconds));
    this.bot.api.config.use(async (prev, method, payload, signal) => {
      if (method !== 'getUpdates') return prev(method, payload, signal);
      try {
        const res = await prev(method, payload, signal);
        this.pollError = res.ok ? null : `telegram: getUpdates failed: ${res.description}`;
        if (res.ok) this.restartDelayMs = POLL_RESTART_MS;
        return res;
      } catch (err) {
        if (!signal?.aborted) this.pollError = `telegram: getUpdates failed: ${(err as Error).message}`;
        throw err;
      }
    });
    // Outermost (installed last): no getUpdates leaves unless the poller lease is certainly ours.
    this.bot.api.config.use(async (prev, method, payload, signal) => {
      if (method === 'getUpdates') await this.fenced(signal);
      return prev(method, payload, signal);
    });
    const rich = new TelegramRich(this.log, config.telegram.rich_messages);
    this.surface = new TelegramSurface(
      this.bot.api,
      this.log,
      telegramEmitter(
        (p) => this.core.nameOf(p),
        () => rich.inForce(),
      ),
      config.telegram.stream_interval_ms,
      config.telegram.streaming,
      rich,
      new TelegramEphemeral(this.bot.api, this.log, config.telegram.ephemeral_notices),
    );
    if (config.telegram.webhook_url) {
      this.webhook = new WebhookRoute({
        http: options.http,
        path: new URL(config.telegram.webhook_url).pathname,
        // Posted while the channel starts: held; stopping, or not started in time: Telegram posts it again later.
        startHoldMs: START_HOLD_MS,
        log: this.log,
        accept: (req, res, raw) =>
          sameSecret(req.headers['x-telegram-bot-api-secret-token'], config.telegram.webhook_secret ?? '')
            ? { raw }
            : answerPlain(res, 401, 'unauthorized'),
        handle: ({ raw }, res) => this.onWebhook(raw, res),
      });
    }
  }

  /** Connect: identify the bot, register commands, then poll or set the webhook. */
  async start(core: ChannelCore): Promise<void> {
    this.core.set(core);
    const { config } = this.options;
    await this.bot.init();
    this.me = { id: this.bot.botInfo.id, username: this.bot.botInfo.username };
    this.bot.use((ctx, next) =>
      this.inbound.track(
        (async () => {
          try {
            await next();
          } finally {
            this.journal.done(ctx.update.update_id);
          }
        })(),
      ),
    );
    this.bot.use(
      sequentialize((ctx) => {
        const t = addressOfContext(ctx);
        return t ? `${t.chatId}:${t.threadId ?? ''}` : undefined;
      }),
    );
    this.bot.use(
      inboundComposer(
        {
          core: () => this.core.get(),
          config,
          paths: this.options.paths,
          log: this.log,
          ephemeral: (address, userId, html, callbackQueryId) =>
            this.surface.ephemeral.send(address, userId, html, callbackQueryId),
        },
        () => this.me,
      ),
    );
    this.bot.catch((err) =>
      this.log.error({ err: err.error, update: err.ctx.update.update_id }, 'telegram update failed'),
    );
    // The command menu is optional: a Bot API without it (or failing for a moment) is warned about and retried.
    this.menu = registerMenu(this.bot.api, botCommands(), this.log, this.options.commandMenuRetryMs ?? MENU_RETRY_MS);

    if (config.telegram.webhook_url) {
      await this.bot.api.setWebhook(config.telegram.webhook_url, {
        secret_token: config.telegram.webhook_secret,
        allowed_updates: [...ALLOWED_UPDATES],
      });
      this.started = true;
      this.webhook?.open();
      this.log.info({ mode: 'webhook' }, 'telegram channel started');
      return;
    }
    // Polling: one instance of all sharing the database polls (elected); the others stand by.
    this.election = await core.store.elect(`telegram-poller:${this.me.id}`, {
      start: (election) => this.startPolling(election),
      stop: () => this.stopPolling(),
    });
    this.started = true;
    this.log.info({ mode: 'polling', poller: this.election.elected }, 'telegram channel started');
  }

  /**
   * Become the poller: take over the journal of the previous one, then run the getUpdates loop.
   * The journal's updates are handed to the handlers before the loop starts (so a chat's replayed
   * updates come before its newly fetched ones) but not waited for: a replayed update that takes
   * long (a download, a transcription) must not keep every chat unpolled.
   */
  private async startPolling(election: Election): Promise<void> {
    this.pollElection = election;
    // Never drop pending updates: they are messages users already sent.
    await this.bot.api.deleteWebhook({ drop_pending_updates: false });
    await this.replayJournal();
    this.pollError = null;
    this.restartDelayMs = POLL_RESTART_MS;
    this.startRunner();
    this.log.info('telegram: this instance polls');
  }

  /**
   * Run the getUpdates loop. It ends on 401 (revoked token), 409 (another getUpdates: a stale
   * poller's last request, or a webhook set elsewhere) or a network failure longer than the
   * runner retries; it is started again after a pause (doubling) for as long as this instance is
   * the poller — the fence keeps a poller that lost its lease from coming back. Ending for good
   * on 409 is what once left every chat unpolled while the lease said somebody polled.
   */
  private startRunner(): void {
    const runner = run(this.bot, {
      runner: { fetch: { allowed_updates: [...ALLOWED_UPDATES], timeout: 30 }, silent: true },
    });
    this.runner = runner;
    runner.task()?.catch((err: unknown) => {
      if (this.runner !== runner) return;
      this.pollError = `telegram: polling stopped: ${(err as Error).message}`;
      const delay = this.restartDelayMs;
      this.restartDelayMs = Math.min(delay * 2, POLL_RESTART_MAX_MS);
      this.log.error({ err, restartInMs: delay }, 'telegram polling stopped; starting it again');
      this.restartTimer = setTimeout(() => {
        this.restartTimer = null;
        if (this.runner === runner) this.startRunner();
      }, delay);
      this.restartTimer.unref();
    });
  }

  /** Wait until the poller lease is certainly this instance's; throw when it is not the poller (any more). */
  private async fenced(signal: { readonly aborted: boolean } | undefined): Promise<void> {
    for (;;) {
      const election = this.pollElection;
      if (!election?.elected) throw new SwitchboardError('not_poller', 'telegram: this instance is not the poller');
      if (await election.fence()) return;
      if (!election.elected) throw new SwitchboardError('not_poller', 'telegram: this instance lost the poller lease');
      await new Promise((r) => setTimeout(r, FENCE_RETRY_MS));
      if (signal?.aborted) throw new SwitchboardError('not_poller', 'telegram: polling stopped');
    }
  }

  /** Stop the getUpdates loop (shutdown, or the lease went to another instance). */
  private async stopPolling(): Promise<void> {
    const runner = this.runner;
    this.runner = null;
    if (this.restartTimer) clearTimeout(this.restartTimer);
    this.restartTimer = null;
    if (runner?.isRunning()) await runner.stop();
  }

  /** Hand updates that were fetched but not handled before the last shutdown or crash to the handlers. */
  private async replayJournal(): Promise<void> {
    const leftovers: Update[] = await this.journal.load();
    if (leftovers.length) this.log.info({ count: leftovers.length }, 'telegram: replaying journaled updates');
    for (const update of leftovers) {
      this.bot.handleUpdate(update).catch((err: unknown) => {
        this.log.error({ err, update: update.update_id }, 'telegram: replayed update failed');
        this.journal.done(update.update_id);
      });
    }
  }

  /** One update the webhook route admitted (its secret checked, the channel running). */
  private async onWebhook(raw: string, res: http.ServerResponse): Promise<void> {
    let update: Update;
    try {
      update = JSON.parse(raw) as Update;
      if (typeof update?.update_id !== 'number') throw new Error('no update_id');
    } catch (err) {
      return answerPlain(res, 400, `bad update: ${(err as Error).message}`);
    }
    // Answered once handled (its message recorded): a crash before the answer gets Telegram's retry.
    try {
      await this.bot.handleUpdate(update);
    } catch (err) {
      // Handlers are idempotent per update id; a failure is logged, not redelivered forever.
      this.log.error({ err, update: update.update_id }, 'telegram webhook update failed');
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  }

  /** Stop receiving; let updates being handled finish (bounded). */
  async stop(): Promise<void> {
    this.started = false;
    this.webhook?.close();
    await this.menu?.stop();
    // Hand polling over: the lease is released, so a standby instance polls within seconds.
    await this.election?.stop();
    await this.stopPolling();
    // Updates being handled finish (their state lands in the database); the presenter's rows
    // that are still open are delivered by the next start.
    await this.inbound.drain();
    await this.journal.flush();
  }

  /** A Telegram user's chat with the bot has the user's id as its chat id. */
  directChat(userId: string): ChatRef | undefined {
    return /^\d+$/.test(userId) ? refOf({ chatId: Number(userId) }) : undefined;
  }

  /** Null when receiving works; else why not. */
  health(): string | null {
    if (!this.started) return 'telegram: not started';
    if (this.pollError) return this.pollError;
    if (this.runner && !this.runner.isRunning()) return 'telegram: polling stopped';
    return null;
  }

  /** Wait until the update journal has written what it holds (tests). */
  async idle(): Promise<void> {
    await this.journal.flush();
  }
}
