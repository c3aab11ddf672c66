/**
 * The environment the Telegram benchmarks start `switchboard start` with: a SQLite database and a
 * workspace in `dir` (created), an ephemeral HTTP port on loopback, warnings only, and the given
 * Telegram users let in. The caller adds the Telegram and model endpoints.
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';

/** Settings of a benchmarked switchboard in `dir`, letting `users` in. */
export function switchboardEnv(dir: string, users: number[]): NodeJS.ProcessEnv {
  mkdirSync(path.join(dir, 'ws'), { recursive: true });
  return {
    SWITCHBOARD_MODEL: 'bench',
    DATABASE_URL: `sqlite:${path.join(dir, 'sb.db')}`,
    SWITCHBOARD_WORKSPACE: path.join(dir, 'ws'),
    SWITCHBOARD_HTTP_PORT: '0',
    SWITCHBOARD__HTTP__HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    TELEGRAM_ALLOWED_USERS: users.join(','),
  };
}
