import SQLite from 'better-sqlite3';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { openDeliveries } from '../../src/store/repos/deliveries.js';
import { type Harness, startHarness } from '../helpers/harness.js';
import { sqliteOnly } from '../helpers/test-db.js';
import { skipped } from '../helpers/skips.js';

let h: Harness | null = null;
afterEach(async () => {
  vi.restoreAllMocks();
  await h?.close();
  h = null;
});

/** `SCAN <table>` steps (a whole table or index read) and temporary sorts of a statement's plan, by SQLite's own planner. */
function scans(db: SQLite.Database, source: string): string[] {
  const params = (source.match(/\?/g) ?? []).map(() => 'x');
  const plan = db.prepare(`EXPLAIN QUERY PLAN ${source}`).all(...params) as Array<{ detail: string }>;
  return plan
    .map((p) => p.detail)
    .filter((d) => (/^SCAN (?!CONSTANT)/.test(d) && !/^SCAN .* VIRTUAL TABLE/.test(d)) || /TEMP B-TREE/.test(d));
}

const onlySqlite = sqliteOnly('the plans checked are SQLite’s');

// The plans are SQLite's; PostgreSQL plans by its own statistics (see test/scale for it).
describe.skipIf(onlySqlite !== undefined)(`query plans of the message path (SQLite)${skipped(onlySqlite)}`, () => {
  it('no statement a message runs reads a whole table or sorts: each one finds its rows through an index, in order', async () => {
    // Every statement run, whatever prepared it (better-sqlite3's statements share one prototype).
    const sources = new Set<string>();
    const scratch = new SQLite(':memory:');
    const statement = Object.getPrototypeOf(scratch.prepare('select 1')) as Record<
      'run' | 'all' | 'get',
      (...args: unknown[]) => unknown
    >;
    scratch.close();
    for (const method of ['run', 'all', 'get'] as const) {
      const original = statement[method];
      vi.spyOn(statement, method).mockImplementation(function (this: SQLite.Statement, ...args: unknown[]) {
        sources.add(this.source);
        return original.apply(this, args);
      });
    }
    // The periodic sweep for stranded work is not the message path: keep it out of the window.
    h = await startHarness({ sweepIntervalMs: 3_600_000 });
    h.llm.setHandler(() => ({ text: 'hello back' }));
    // Many conversations, so a scan would be a real cost and the planner has a reason to avoid it.
    for (let i = 0; i < 3; i++) {
      for (const chat of ['chat1', 'chat2'])
        expect((await h.send(`message ${i}`, { chatKey: chat })).status).toBe('queued');
      await h.core.idle();
    }
    sources.clear();
    // Only what messages run, now that start-up is done: one more in a known chat, one in a new chat.
    expect((await h.send('one more')).status).toBe('queued');
    await h.core.idle();
    const third = await h.send('first words', { chatKey: 'chat3' });
    if (third.status !== 'queued') throw new Error(third.status);
    await h.core.idle();
    // What the presenter reads after each turn for a chat with a surface (this channel has none).
    await openDeliveries(h.core.db, third.conversationId);
    const probe = new SQLite(h.config.store.database_url.replace(/^sqlite:/, ''), { readonly: true });
    try {
      const found = [...sources]
        .filter((s) => !/^\s*(begin|commit|rollback|savepoint|release|pragma)/i.test(s))
        .map((s) => ({ sql: s.replace(/\s+/g, ' ').trim(), scans: scans(probe, s) }));
      expect(found.length).toBeGreaterThan(8);
      // Read whole, and sorted, on purpose: `store_versions` (one row per kind of cached state)
      // and the approval rules people wrote (a handful, loaded once per change, kept in memory).
      const small = /from "(store_versions|approval_rules)"/;
      expect(found.filter((f) => f.scans.length > 0 && !small.test(f.sql))).toEqual([]);
    } finally {
      probe.close();
    }
  });
});
