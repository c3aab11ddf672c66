/**
 * What a channel declares about itself to the rest of the program, so that nothing outside its
 * folder names it: whether the configuration turns it on, how it is built (its SDK loaded only
 * then), which users its own config section lets in, whether it is the local operator's terminal,
 * and what `switchboard doctor` checks for it. Each channel exports one {@link ChannelKind};
 * `registry.ts` lists them.
 */
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { Channel } from '../contract/channel.js';
import type { CoreEvent } from '../contract/events.js';
import type { AccessKind } from '../core/access.js';
import type { HttpServer } from '../http/server.js';
import type { Db } from '../store/db.js';
import type { PathPolicy } from '../tools/path-policy.js';

/** One line of `switchboard doctor`. */
export interface DoctorCheck {
  name: string;
  ok: boolean;
  detail: string;
  /** A warning does not fail the doctor. */
  warnOnly?: boolean;
}

/** What a server channel is built with (before the shared HTTP server listens). */
export interface ChannelBuildOptions {
  config: Config;
  /** The shared HTTP server: webhook and events routes are registered on it. */
  http: HttpServer;
  log: Logger;
  paths: PathPolicy;
  /** The core's database (channels that keep their own rows, e.g. web sessions). */
  db: Db;
  /** Every core event of every conversation (returns an unsubscribe function). */
  subscribe(listener: (conversationId: string, event: CoreEvent) => void): () => void;
  /** The model is the built-in scripted demo (`start --demo`): a channel with a page of its own labels it. */
  demo?: boolean;
}

/**
 * A channel's declaration (see the file comment); its name, locality, sign-in, admins and allowed
 * users are the {@link AccessKind} access decisions read.
 */
export interface ChannelKind extends AccessKind {
  /** What turns the channel on, in words for an error (`set TELEGRAM_BOT_TOKEN`). */
  readonly howToEnable?: string;
  /** Whether `switchboard start` runs this channel with this configuration (absent: never). */
  configured?(config: Config): boolean;
  /** Build the channel; import its SDK here, so an unconfigured platform costs nothing. */
  create?(options: ChannelBuildOptions): Promise<Channel>;
  /** `switchboard doctor`'s checks for this channel when it is configured (plain HTTP, no SDK). */
  doctor?(config: Config): Promise<DoctorCheck[]>;
}

/** Run one doctor check: its message on failure, its detail on success. */
export async function doctorCheck(name: string, fn: () => Promise<string>, warnOnly = false): Promise<DoctorCheck> {
  try {
    return { name, ok: true, detail: await fn() };
  } catch (err) {
    return { name, ok: false, detail: (err as Error).message, warnOnly };
  }
}
