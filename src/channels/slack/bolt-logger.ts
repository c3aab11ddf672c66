/**
 * Bolt, the WebClient and the Socket Mode client log through `@slack/logger`'s interface: the
 * kit's SDK logger (pino one level lower: message text never above `trace`), with the level and
 * name methods those SDKs call.
 */
import { LogLevel, type Logger as SlackLogger } from '@slack/bolt';
import type { Logger } from 'pino';
import { sdkLogger } from '../../kit/index.js';

/** Wrap a pino logger for the Slack SDKs. */
export function boltLogger(log: Logger): SlackLogger {
  let level: LogLevel = LogLevel.INFO;
  return {
    ...sdkLogger(log),
    // Level filtering is pino's job; the SDKs only read it back.
    setLevel: (l) => {
      level = l;
    },
    getLevel: () => level,
    setName: () => {},
  };
}
