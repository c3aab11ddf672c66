/**
 * A platform SDK's logger over pino. SDKs log through a small interface of their own (`debug`,
 * `info`, `warn`, `error`, each taking any values); this sends them to pino one level lower for
 * `debug` and `info` (an SDK's `info` is chatty, its `debug` dumps request bodies), so a normal
 * `info` log stays quiet and message text never appears above `trace`.
 */
import type { Logger } from 'pino';

/** The four levels of an SDK logger. */
export interface SdkLogger {
  debug(...msg: unknown[]): void;
  info(...msg: unknown[]): void;
  warn(...msg: unknown[]): void;
  error(...msg: unknown[]): void;
}

/** An SDK's log values as one line: strings as they are, an error by its message, the rest as JSON. */
export function sdkLogLine(msg: unknown[]): string {
  return msg.map((m) => (typeof m === 'string' ? m : m instanceof Error ? m.message : JSON.stringify(m))).join(' ');
}

/** Wrap `log` for an SDK (see the module's note). */
export function sdkLogger(log: Logger): SdkLogger {
  return {
    debug: (...msg) => log.trace(sdkLogLine(msg)),
    info: (...msg) => log.debug(sdkLogLine(msg)),
    warn: (...msg) => log.warn(sdkLogLine(msg)),
    error: (...msg) => log.error(sdkLogLine(msg)),
  };
}

/**
 * An SDK logger with the level and name methods some SDKs call (Slack's `@slack/logger`
 * interface): `setLevel` and `getLevel` keep a level the SDK reads back, `setName` does nothing.
 * Level filtering stays pino's job; the kept level only answers the SDK.
 */
export interface LeveledSdkLogger<L> extends SdkLogger {
  setLevel(level: L): void;
  getLevel(): L;
  setName(name: string): void;
}

/** Wrap `log` for an SDK that sets and reads back its level, starting at `level` (see {@link LeveledSdkLogger}). */
export function leveledSdkLogger<L>(log: Logger, level: L): LeveledSdkLogger<L> {
  return {
    ...sdkLogger(log),
    setLevel: (l) => {
      level = l;
    },
    getLevel: () => level,
    setName: () => {},
  };
}
