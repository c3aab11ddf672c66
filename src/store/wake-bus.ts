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

/** Sends and receives wake-ups on the topics it was opened with. */
export interface WakeBus<Topic extends string = string> {
  /** Tell the other instances something on `topic` (a conversation id, or a channel's hint). */
  notify(topic: Topic, payload: string): Promise<void>;
  close(): Promise<void>;
}

/**
 * Listen on `url` (a PostgreSQL database) for the other instances' notices on each topic of
 * `handlers` (one connection for all), calling the topic's handler with each. `self` names this
 * instance (no spaces). A topic's channel is named after it (the core's `wake` and `stop`; a
 * channel may carry its own hints on another) and the schema the connection works in, so
 * deployments sharing a database by schema do not wake each other. Null for SQLite.
 */
export async function openWakeBus<Topic extends string>(
  db: Db,
  url: string,
  self: string,
  handlers: Record<Topic, (payload: string) => void>,
  log: Logger,
): Promise<WakeBus<Topic> | null> {
  if (!isPostgres(db)) return null;
  const schema =
    (await sql<{ schema: string }>`SELECT current_schema() AS schema`.execute(db)).rows[0]?.schema ?? 'public';
  const topics = Object.keys(handlers) as Topic[];
  const channelOf = (topic: Topic) => `switchboard_${topic}_${schema}`.slice(0, 63);
  const handlerOf = new Map(topics.map((t) => [channelOf(t), handlers[t]]));
  const { default: driver } = await import('pg');
  let client: pg.Client | null = null;
  let closed = false;
  let retry: NodeJS.Timeout | null = null;

  const connect = async (): Promise<void> => {
    const c = new driver.Client({ connectionString: url });
    c.on('notification', (msg) => {
      // Payload: `sender payload` (what follows the first space, whole); an instance's own
      // notifications are skipped.
      const text = msg.payload ?? '';
      const space = text.indexOf(' ');
      const sender = text.slice(0, space);
      const payload = space > 0 ? text.slice(space + 1) : '';
      const handler = handlerOf.get(msg.channel);
      if (handler && sender !== self && payload) handler(payload);
    });
    c.on('error', (err) => {
      log.warn({ err }, 'wake-up listener lost its connection; reconnecting (the sweep covers the gap)');
      if (client === c) client = null;
      c.end().catch(() => {});
      schedule();
    });
    await c.connect();
    for (const topic of topics) await c.query(`LISTEN "${channelOf(topic)}"`);
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
    async notify(topic, payload) {
      await sql`SELECT pg_notify(${channelOf(topic)}, ${`${self} ${payload}`})`.execute(db);
    },
    async close() {
      closed = true;
      if (retry) clearTimeout(retry);
      await client?.end().catch(() => {});
      client = null;
    },
  };
}
