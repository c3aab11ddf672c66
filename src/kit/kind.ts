/**
 * What a channel declares about itself to the rest of the program, so that nothing outside its
 * folder names it: whether the configuration turns it on, how it is built (its SDK loaded only
 * then), its configuration section, which users it lets in, whether it is the local operator's
 * terminal (and then how its terminal chat is opened), what `switchboard doctor` checks for it
 * (its `doctor.ts`), and a command line of its own if it has one. Each channel exports one {@link ChannelKind};
 * `registry.ts` lists them.
 */
import type { Readable, Writable } from 'node:stream';
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { ConfigSection } from '../config-section.js';
import type { Channel } from '../contract/channel.js';
import type { CoreEvent } from '../contract/events.js';
import type { AccessKind } from '../core/access.js';
import type { HttpServer } from '../http/server.js';
import type { CliOutcome } from '../jobs/cli.js';
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

/** Where a terminal chat reads and writes (`switchboard chat`, `chat --jsonl`, `start`'s console). */
export interface TerminalIo {
  /** JSON lines for scripts instead of the interactive chat. */
  jsonl: boolean;
  /** The conversation (chat key) this session opens. */
  conversation: string;
  input: Readable;
  output: Writable;
  /** Called when input ends and the core is idle. */
  onEnd: () => void;
  /** What else leaving this terminal chat stops (`start`'s console ends the process: "the web chat"). */
  alsoStops?: string;
}

/** The options of a command line, as `node:util` `parseArgs` read them. */
export type CliFlags = Readonly<Record<string, string | boolean | (string | boolean)[] | undefined>>;

/**
 * A channel's declaration (see the file comment); its name, locality, sign-in, admins and allowed
 * users are the {@link AccessKind} access decisions read.
 */
export interface ChannelKind extends AccessKind {
  /**
   * Its configuration section (`./config.ts` in its folder: keys, env names, cross-field checks),
   * the same object `src/config-sections.ts` lists, so the configuration composes it.
   */
  readonly config?: ConfigSection;
  /** What turns the channel on, in words for an error (`set TELEGRAM_BOT_TOKEN`). */
  readonly howToEnable?: string;
  /** Whether `switchboard start` runs this channel with this configuration (absent: never). */
  configured?(config: Config): boolean;
  /** Build the channel; import its SDK here, so an unconfigured platform costs nothing. */
  create?(options: ChannelBuildOptions): Promise<Channel>;
  /** `switchboard doctor`'s checks for this channel when it is configured (plain HTTP, no SDK). */
  doctor?(config: Config): Promise<DoctorCheck[]>;
  /** The terminal chat, for the channel that is the local operator's terminal (`local`). */
  terminal?(io: TerminalIo): Promise<Channel>;
  /**
   * `switchboard <name> <sub> [arg]`: a command line of the channel's own, named after it (the web
   * chat's login links and sessions), run straight on the configuration (the server need not run).
   */
  cli?(config: Config, sub: string | undefined, arg: string | undefined, flags: CliFlags): Promise<CliOutcome>;
}

/** Run one doctor check: its message on failure, its detail on success. */
export async function doctorCheck(name: string, fn: () => Promise<string>, warnOnly = false): Promise<DoctorCheck> {
  try {
    return { name, ok: true, detail: await fn() };
  } catch (err) {
    return { name, ok: false, detail: (err as Error).message, warnOnly };
  }
}
