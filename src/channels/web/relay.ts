/**
 * The web chat's hints between instances over one PostgreSQL database (LISTEN/NOTIFY, see
 * `store/wake-bus.ts`): "a user's messages changed" and the Stop button's signal. Behind a load
 * balancer a page's event stream is often served by another instance than the one that writes
 * its rows or runs its turn; without the hint that stream would see new rows only at its next
 * poll, and never see a signal (signals are not stored). A lost hint costs a poll interval for
 * rows and a Stop button out of date until the page asks `/api/status` (at its next reconnect).
 */
import { randomUUID } from 'node:crypto';
import os from 'node:os';
import type { Logger } from 'pino';
import { openWakeBus } from '../../kit/index.js';
import type { Db } from '../../kit/index.js';
import type { WebNotice } from './surface.js';

/** The open relay of this instance. */
export interface WebRelay {
  /** Tell the other instances (never throws; a failure is logged: the hint is optional). */
  send(notice: WebNotice): void;
  close(): Promise<void>;
}

/** Open the relay over `url`; null for SQLite (one process: the in-process bus serves). */
export async function openRelay(
  db: Db,
  url: string,
  log: Logger,
  onNotice: (notice: WebNotice) => void,
): Promise<WebRelay | null> {
  const self = `web:${os.hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`.replace(/\s/g, '_');
  const bus = await openWakeBus(
    db,
    url,
    self,
    {
      web: (payload) => {
        const notice = parseNotice(payload);
        if (notice) onNotice(notice);
      },
    },
    log,
  );
  if (!bus) return null;
  return {
    send(notice) {
      bus
        .notify('web', JSON.stringify(notice))
        .catch((err: unknown) => log.debug({ err }, 'web: a hint to other instances failed'));
    },
    close: () => bus.close(),
  };
}

/** A notice from its payload; undefined for anything malformed (another version, say). */
function parseNotice(payload: string): WebNotice | undefined {
  try {
    const v = JSON.parse(payload) as Partial<WebNotice>;
    if (typeof v.chat !== 'string') return undefined;
    const s = v.signal;
    if (s === undefined) return { chat: v.chat };
    if (typeof s === 'object' && s && typeof s.thread === 'string' && typeof s.running === 'boolean')
      return { chat: v.chat, signal: { thread: s.thread, running: s.running } };
  } catch {
    // not ours
  }
  return undefined;
}
