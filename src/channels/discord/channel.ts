/**
 * The Discord channel: the gateway (`@discordjs/ws`) brings messages and interactions, the REST
 * client (`@discordjs/rest`, one attempt per call: the presenter retries) sends. What people must
 * see reaches Discord through the presenter, which drives the {@link DiscordSurface}.
 */
import {
  type Channel,
  type ChannelBuildOptions,
  type BackgroundRetry,
  type ChannelCapability,
  type ChatRef,
  ConfigError,
  CoreHolder,
  type ChannelCore,
  InboundQueue,
} from '../../kit/index.js';
import { Client, GatewayDispatchEvents, GatewayIntentBits } from '@discordjs/core';
import { REST } from '@discordjs/rest';
import { WebSocketManager } from '@discordjs/ws';
import type { Logger } from 'pino';
import { registerSlash } from './commands.js';
import { CHANNEL, type DiscordContext, refOf } from './context.js';
import { discordEmitter } from './emitter.js';
import { onMessage } from './inbound.js';
import { onInteraction } from './interactions.js';
import { DiscordSurface } from './surface.js';

/** Options of {@link DiscordChannel}. */
export interface DiscordChannelOptions extends Pick<ChannelBuildOptions, 'config' | 'log' | 'paths'> {
  /** First pause before a failed slash-command registration is tried again, ms. */
  commandRetryMs?: number;
}

/** DMs, guild messages (with their content: a thread is answered without a mention) and servers. */
const { Guilds, GuildMessages, DirectMessages, MessageContent } = GatewayIntentBits;
const INTENTS = Guilds | GuildMessages | DirectMessages | MessageContent;

/** The gateway at `discord.gateway_url` when set, instead of the one `GET /gateway/bot` names. */
class PinnedGateway extends WebSocketManager {
  url: string | undefined;

  override async fetchGatewayInformation(force?: boolean) {
    const info = await super.fetchGatewayInformation(force);
    return this.url ? { ...info, url: this.url } : info;
  }
}

/** The Discord {@link Channel}. */
export class DiscordChannel implements Channel {
  readonly name = CHANNEL;
  readonly capabilities: ReadonlySet<ChannelCapability> = new Set<ChannelCapability>([
    'attachments',
    'direct-to-members',
  ]);
  readonly surface: DiscordSurface;
  private readonly log: Logger;
  private readonly gateway: WebSocketManager;
  private readonly client: Client;
  private registration: BackgroundRetry | null = null;
  private readonly inbound: InboundQueue;
  private readonly core = new CoreHolder(CHANNEL);
  private botId = '';
  private ready = false;

  constructor(private readonly options: DiscordChannelOptions) {
    const { discord } = options.config;
    const token = discord.bot_token;
    if (!token) throw new ConfigError('config: discord.bot_token (env DISCORD_BOT_TOKEN): required for Discord');
    this.log = options.log;
    const rest = new REST({ api: discord.api_root.replace(/\/+$/, ''), retries: 0, rejectOnRateLimit: () => true });
    rest.setToken(token);
    const gateway = new PinnedGateway({ token, intents: INTENTS, rest });
    gateway.url = discord.gateway_url;
    this.gateway = gateway;
    this.client = new Client({ rest, gateway: this.gateway });
    this.inbound = new InboundQueue(this.log, 'discord: event failed');
    const nameOf = (p: string | null | undefined) => this.core.nameOf(p);
    this.surface = new DiscordSurface(this.client.api, this.log, discordEmitter(nameOf), discord.stream_interval_ms);
  }

  private context(): DiscordContext {
    return {
      core: () => this.core.get(),
      surface: this.surface,
      config: this.options.config.discord,
      log: this.log,
      paths: this.options.paths,
      botId: () => this.botId,
    };
  }

  /** Identify the bot, listen, connect the gateway; the slash command is registered once READY names the application. */
  async start(core: ChannelCore): Promise<void> {
    this.core.set(core);
    this.botId = (await this.client.api.users.getCurrent()).id;
    const ctx = this.context();
    this.client.on(GatewayDispatchEvents.Ready, ({ data }) => {
      this.ready = true;
      // A READY after a reconnect registers again: the retry of the one before ends.
      void this.registration?.stop();
      this.registration = registerSlash(this.client.api, data.application.id, this.log, this.options.commandRetryMs);
    });
    // A channel's messages in order, channels side by side.
    this.client.on(GatewayDispatchEvents.MessageCreate, ({ data }) => {
      void this.inbound.run(data.channel_id, () => onMessage(ctx, data));
    });
    // Not queued behind messages: Discord waits 3 s for the acknowledgement.
    this.client.on(GatewayDispatchEvents.InteractionCreate, ({ data, api }) => {
      void this.inbound.track(
        onInteraction(ctx, api, data).catch((err: unknown) => this.log.error({ err }, 'discord: interaction failed')),
      );
    });
    await this.gateway.connect();
    this.log.info('discord channel started');
  }

  /** Stop receiving; let events being handled finish (bounded). */
  async stop(): Promise<void> {
    this.ready = false;
    await this.registration?.stop();
    await this.gateway.destroy();
    await this.inbound.drain();
  }

  /** A person's DM with the bot (where admins are asked to approve a pairing). */
  directChat(userId: string): ChatRef | undefined {
    return /^\d+$/.test(userId) ? refOf(userId) : undefined;
  }

  /** Null when receiving works; else why not. */
  health(): string | null {
    return this.ready ? null : 'discord: gateway not ready';
  }
}
