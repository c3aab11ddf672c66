/**
 * Elections (`core/election.ts`): of the instances sharing a database, one does the work (the
 * Telegram poller is one such work); a standby takes over when the holder stops or dies, and a
 * holder that finds its lease taken stops the work at once. Instances here are two lease holders
 * over one database; `test/scale/poller.test.ts` covers the same with killed processes.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { ElectedWork, Election } from '../../src/contract/core.js';
import { ELECTION_TIMING, type ElectionLeases, type ElectionTiming, stand } from '../../src/core/election.js';
import { Leases } from '../../src/core/leases.js';
import { createMetrics } from '../../src/metrics.js';
import { silentLogger } from '../../src/log.js';
import { type Db, migrateToLatest } from '../../src/store/db.js';
import { waitFor } from '../helpers/harness.js';
import { openTestDatabase } from '../helpers/test-db.js';

const NAME = 'telegram-poller:42';
/**
 * The production intervals at 2/5 of their length, in the same proportions: the tests wait out
 * leases and retries, and at full length that was 14 s of waiting. Still long enough that a
 * renewal (every third of the lease) is not late on a loaded machine.
 */
const T: ElectionTiming = {
  leaseMs: (ELECTION_TIMING.leaseMs * 2) / 5,
  retryMs: (ELECTION_TIMING.retryMs * 2) / 5,
  watchMs: ELECTION_TIMING.watchMs / 2,
  fenceMs: (ELECTION_TIMING.fenceMs * 2) / 5,
};
let dir: string;
let db: Db;
const elections: Election[] = [];

beforeEach(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'sb-election-'));
  db = openTestDatabase(dir);
  await migrateToLatest(db);
});
afterEach(async () => {
  vi.useRealTimers();
  for (const e of elections.splice(0)) await e.stop();
  await db.destroy();
  rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
});

/** An instance: its own holder id (of another host, so never taken for a dead local process). */
function instance(id: string): Leases {
  return new Leases(db, `elsewhere:${id}:x`, 30_000, createMetrics(), silentLogger());
}

/** A holder whose renewal timer never runs (a dead process, or a starved one): renewals only when asked. */
function unrenewed(leases: Leases): ElectionLeases {
  return {
    claim: leases.claim.bind(leases),
    keepAlive: () => () => {},
    release: async () => {},
    renewOnce: leases.renewOnce.bind(leases),
    holderOf: leases.holderOf.bind(leases),
  };
}

async function leaseRow(): Promise<{ holder: string; expires_at: number }> {
  const row = await db
    .selectFrom('leases')
    .select(['holder', 'expires_at'])
    .where('name', '=', NAME)
    .executeTakeFirstOrThrow();
  return { holder: row.holder, expires_at: Number(row.expires_at) };
}

/** Work that records whether it runs; `failStarts` starts throw first. */
function work(failStarts = 0): ElectedWork & { running: boolean; starts: number; stops: number } {
  const w = {
    running: false,
    starts: 0,
    stops: 0,
    async start() {
      w.starts++;
      if (w.starts <= failStarts) throw new Error('cannot start');
      w.running = true;
    },
    async stop() {
      w.stops++;
      w.running = false;
    },
  };
  return w;
}

async function elect(leases: ElectionLeases, w: ElectedWork): Promise<Election> {
  const e = await stand(leases, NAME, w, silentLogger(), T);
  elections.push(e);
  return e;
}

describe('elections', () => {
  it('one instance does the work; it stands down and a standby takes over within one retry', async () => {
    const wa = work();
    const wb = work();
    const a = await elect(instance('a'), wa);
    const b = await elect(instance('b'), wb);
    expect([a.elected, b.elected]).toEqual([true, false]);
    expect([wa.running, wb.running]).toEqual([true, false]);
    // Past the standby's next try: still one.
    await new Promise((r) => setTimeout(r, T.retryMs + 300));
    expect(b.elected).toBe(false);

    const stoppedAt = Date.now();
    await a.stop();
    expect(wa.running).toBe(false);
    await waitFor(() => b.elected && wb.running, 'the standby to be elected', 5_000);
    // Given up, not left to run out: the standby's next try takes it, before the lease would have expired.
    expect(Date.now() - stoppedAt).toBeLessThan(T.leaseMs);
  }, 20_000);

  it('a holder that dies (stops renewing) is replaced once its lease runs out', async () => {
    const leasesA = instance('a');
    // A dead process renews nothing and releases nothing.
    const dead = {
      claim: leasesA.claim.bind(leasesA),
      keepAlive: () => () => {},
      release: async () => {},
      renewOnce: async () => null,
      holderOf: leasesA.holderOf.bind(leasesA),
    };
    const wb = work();
    const a = await elect(dead, work());
    const b = await elect(instance('b'), wb);
    expect([a.elected, b.elected]).toEqual([true, false]);
    const diedAt = Date.now();
    await waitFor(() => wb.running, 'the standby to take over', T.leaseMs + T.retryMs + 3_000);
    expect(Date.now() - diedAt).toBeGreaterThanOrEqual(T.leaseMs - T.retryMs);
    const row = await db
      .selectFrom('leases')
      .select(['holder', 'taken_over'])
      .where('name', '=', NAME)
      .executeTakeFirstOrThrow();
    expect(row).toEqual({ holder: 'elsewhere:b:x', taken_over: 1 });
  }, 30_000);

  it('a holder that finds its lease taken stops the work at once and stands by', async () => {
    const wa = work();
    const a = await elect(instance('a'), wa);
    expect(wa.running).toBe(true);
    // Another instance took the row over (this one stalled past the expiry, say).
    await db
      .updateTable('leases')
      .set((eb) => ({ holder: 'elsewhere:thief:x', token: eb('token', '+', 1), expires_at: Date.now() + 60_000 }))
      .where('name', '=', NAME)
      .execute();
    await waitFor(() => !wa.running, 'the work to stop', T.leaseMs);
    expect(a.elected).toBe(false);
    expect(wa.stops).toBe(1);
    // Standing by: the thief's lease is live, so it is not claimed back.
    await new Promise((r) => setTimeout(r, T.retryMs + 300));
    expect(wa.running).toBe(false);
  }, 20_000);

  it('work that cannot start gives the lease up, and the next try starts it', async () => {
    const wa = work(1);
    const a = await elect(instance('a'), wa);
    expect(a.elected).toBe(false);
    expect(wa.starts).toBe(1);
    const row = await db.selectFrom('leases').select('expires_at').where('name', '=', NAME).executeTakeFirstOrThrow();
    expect(Number(row.expires_at)).toBe(0);
    await waitFor(() => wa.running, 'the second start', T.retryMs + 2_000);
    expect(a.elected).toBe(true);
  }, 20_000);

  it('a holder of this host whose process is gone is replaced at once, before its lease runs out', async () => {
    const holderProcess = spawn('sleep', ['60'], { stdio: 'ignore' });
    const exited = once(holderProcess, 'exit');
    try {
      const holder = new Leases(db, `${os.hostname()}:${holderProcess.pid}:x`, 30_000, createMetrics(), silentLogger());
      const a = await elect(unrenewed(holder), work());
      const wb = work();
      const b = await elect(instance('b'), wb);
      expect([a.elected, b.elected]).toEqual([true, false]);
      const { expires_at } = await leaseRow();
      holderProcess.kill('SIGKILL');
      await exited;
      await waitFor(() => wb.running, 'the standby to take over', T.leaseMs + T.retryMs);
      expect(Date.now()).toBeLessThan(expires_at);
      expect((await leaseRow()).holder).toBe('elsewhere:b:x');
    } finally {
      holderProcess.kill('SIGKILL');
    }
  });

  it('a holder starved of its renewals renews before it acts, and finds a lost lease before it acts', async () => {
    // Only the clock is faked: a holder whose renewal timer did not run for a while.
    vi.useFakeTimers({ toFake: ['Date'] });
    const wa = work();
    const a = await elect(unrenewed(instance('a')), wa);
    expect(await a.fence()).toBe(true);
    const claimed = await leaseRow();
    vi.setSystemTime(Date.now() + T.leaseMs - T.fenceMs + 500);
    // Still its own, with too little left to act on: renewed first, then it acts.
    expect(await a.fence()).toBe(true);
    expect((await leaseRow()).expires_at).toBeGreaterThan(claimed.expires_at);
    // Starved past the expiry, and another instance took the lease meanwhile: no action, the work stops.
    vi.setSystemTime(Date.now() + T.leaseMs + 500);
    expect(await instance('b').claim(NAME, T.leaseMs)).not.toBeNull();
    expect(await a.fence()).toBe(false);
    expect(a.elected).toBe(false);
    expect(wa.running).toBe(false);
    expect(wa.stops).toBe(1);
  });
});
