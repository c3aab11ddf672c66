/**
 * Cross-instance wake-ups over PostgreSQL LISTEN/NOTIFY: an instance that records a decision or a
 * message tells the others "conversation X has work". The notification is only a hint: the tables
 * are the truth and every instance's sweep polls them, so a missed notification (a reconnect, an
 * instance starting) costs at most one sweep interval. SQLite has no bus: the sweep alone serves.
 */
import { sql } from 'kysely';
import type pg from 'pg';
import type { Logger } from 'pino';
import type { Db } from './db.js';
import { isPostgres } from './dialect.js';

/** Sends and receives wake-ups. */
export interface WakeBus {
  /** Tell the other instances that a conversation has work. */
  notify(conversationId: string): Promise<void>;
  close(): Promise<void>;
}

/**
 * Listen for wake-ups on `url` (a PostgreSQL database), calling `onWake` for each. `self` names
 * this instance (no spaces). The channel is named after `topic` (default `wake`: the core's
 * conversations; a channel may carry its own hints on another) and the schema the connection
 * works in, so deployments sharing a database by schema do not wake each other. Null for SQLite.
 */
export async function openWakeBus(
  db: Db,
  url: string,
  self: string,
  onWake: (conversationId: string) => void,
  log: Logger,
  topic = 'wake',
): Promise<WakeBus | null> {
  if (!isPostgres(db)) return null;
  const schema =
    (await sql<{ schema: string }>`SELECT current_schema() AS schema`.execute(db)).rows[0]?.schema ?? 'public';
  const channel = `switchboard_${topic}_${schema}`.slice(0, 63);
  const { default: driver } = await import('pg');
  let client: pg.Client | null = null;
  let closed = false;
  let retry: NodeJS.Timeout | null = null;

  const connect = async (): Promise<void> => {
    const c = new driver.Client({ connectionString: url });
    c.on('notification', (msg) => {
      // Payload: `sender conversationId` (what follows the first space, whole); an instance's own
      // notifications are skipped.
      const payload = msg.payload ?? '';
      const space = payload.indexOf(' ');
      const sender = payload.slice(0, space);
      const conversationId = space > 0 ? payload.slice(space + 1) : '';
      if (msg.channel === channel && sender !== self && conversationId) onWake(conversationId);
    });
    c.on('error', (err) => {
      log.warn({ err }, 'wake-up listener lost its connection; reconnecting (the sweep covers the gap)');
      if (client === c) client = null;
      c.end().catch(() => {});
      schedule();
    });
    await c.connect();
    await c.query(`LISTEN "${channel}"`);
    if (closed) {
      await c.end();
      return;
    }
    client = c;
  };
  const schedule = () => {
    if (closed || retry) return;
    retry = setTimeout(() => {
      retry = null;
      connect().catch((err) => {
        log.warn({ err }, 'wake-up listener could not reconnect; retrying');
        schedule();
      });
    }, 1000);
    retry.unref();
  };

  await connect();
  return {
    async notify(conversationId) {
      await sql`SELECT pg_notify(${channel}, ${`${self} ${conversationId}`})`.execute(db);
    },
    async close() {
      closed = true;
      if (retry) clearTimeout(retry);
      await client?.end().catch(() => {});
      client = null;
    },
  };
}
