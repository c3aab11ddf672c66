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
