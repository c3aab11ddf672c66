/**
 * `switchboard web link [--user NAME] [--admin] [--ttl MINUTES]`, `web sessions`, `web revoke ID|USER`:
 * login links and sessions of the web chat, straight on the database (the server need not run).
 */
import { migrateToLatest, openStore, deleteSessions, liveSessions } from '../../kit/index.js';
import type { Config, CliOutcome } from '../../kit/index.js';
import { baseUrl, createLoginLink, validUserName } from './auth.js';

const USAGE = 'usage: switchboard web link [--user NAME] [--admin] [--ttl MINUTES] | web sessions | web revoke ID|USER';

/** Run one `web` subcommand. */
export async function webCommand(
  config: Config,
  sub: string | undefined,
  arg: string | undefined,
  flags: { user?: string; admin: boolean; ttl?: string },
): Promise<CliOutcome> {
  if (sub !== 'link' && sub !== 'sessions' && sub !== 'revoke') return { code: 2, stderr: USAGE };
  const user = flags.user ?? 'operator';
  if (!validUserName(user))
    return { code: 2, stderr: 'usage: --user takes 1-64 letters, digits, ".", "_", "@" or "-"' };
  const ttl = flags.ttl === undefined ? config.web.link_ttl_minutes : Number(flags.ttl);
  if (!Number.isInteger(ttl) || ttl < 1 || ttl > 7 * 24 * 60)
    return { code: 2, stderr: 'usage: --ttl takes whole minutes from 1 to 10080' };
  if (sub === 'revoke' && !arg) return { code: 2, stderr: USAGE };
  const db = openStore(config.store);
  try {
    await migrateToLatest(db);
    if (sub === 'link') {
      const link = await createLoginLink(db, baseUrl(config, config.http.port), {
        user,
        admin: flags.admin,
        ttlMinutes: ttl,
      });
      return { code: 0, stdout: `${link.url}\n` };
    }
    if (sub === 'sessions') {
      const rows = await liveSessions(db, Date.now());
      const iso = (ms: number) => new Date(ms).toISOString();
      return {
        code: 0,
        stdout: rows
          .map(
            (r) =>
              `${r.id}  web:${r.user_name}  ${r.admin ? 'admin' : 'user'}  ${iso(r.created_at)}  ${iso(r.last_seen_at)}\n`,
          )
          .join(''),
      };
    }
    const n = await deleteSessions(db, arg!);
    return n
      ? { code: 0, stdout: `revoked ${n} session${n === 1 ? '' : 's'}\n` }
      : { code: 1, stderr: `no web session ${arg}` };
  } finally {
    await db.destroy();
  }
}
