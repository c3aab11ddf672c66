/**
 * Bolt, the WebClient and the Socket Mode client log through `@slack/logger`'s interface; this
 * adapter sends them to pino one level lower (their `info` is chatty, their `debug` dumps request
 * bodies), so a normal `info` log stays quiet and message text never appears above `trace`.
 */
import { LogLevel, type Logger as SlackLogger } from '@slack/bolt';
import type { Logger } from 'pino';

const format = (msg: unknown[]) =>
  msg.map((m) => (typeof m === 'string' ? m : m instanceof Error ? m.message : JSON.stringify(m))).join(' ');

/** Wrap a pino logger for the Slack SDKs. */
export function boltLogger(log: Logger): SlackLogger {
  let level: LogLevel = LogLevel.INFO;
  return {
    debug: (...msg) => log.trace(format(msg)),
    info: (...msg) => log.debug(format(msg)),
    warn: (...msg) => log.warn(format(msg)),
    error: (...msg) => log.error(format(msg)),
    // Level filtering is pino's job; the SDKs only read it back.
    setLevel: (l) => {
      level = l;
    },
    getLevel: () => level,
    setName: () => {},
  };
}
