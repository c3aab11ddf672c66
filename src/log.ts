/**
 * The pino root logger. Logs go to stderr (stdout belongs to the JSONL protocol). Tokens,
 * keys and message text are redacted by default; payloads appear only at debug.
 */
import { pino, type Logger } from 'pino';

/** Paths redacted wherever they appear in a log object. */
export const REDACT_PATHS = [
  'token',
  '*.token',
  'apiKey',
  '*.apiKey',
  'api_key',
  '*.api_key',
  'authorization',
  '*.authorization',
  'headers.authorization',
  '*.headers.authorization',
  'bot_token',
  '*.bot_token',
  'app_token',
  '*.app_token',
  'signing_secret',
  '*.signing_secret',
  'webhook_secret',
  '*.webhook_secret',
  'text',
  '*.text',
  'content',
  '*.content',
];

/**
 * Create the root logger at `level` writing to stderr (fd 2), or appending to `file` (the
 * interactive console, where log lines would tear the conversation apart).
 */
export function createLogger(level: string = 'info', file?: string): Logger {
  return pino(
    {
      level,
      base: { app: 'switchboard' },
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    },
    file
      ? pino.destination({ dest: file, append: true, mkdir: true, sync: true })
      : pino.destination({ fd: 2, sync: false }),
  );
}

/** A logger that discards everything (tests, benchmarks). */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
