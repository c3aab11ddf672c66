/**
 * A channel's memo (`core.memo(name)`, e.g. the Slack assistant thread a DM's replies go to): kept
 * under settings named `<name>.<key>`, so a restarted process answers where the last one did and a
 * value saved by earlier versions is read; another instance's change is seen at the next look at
 * the change counter; a set while the value is being read wins; a write that fails keeps the value
 * in memory and says so in the log, and throws at nobody.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { SettingsMemo } from '../../src/core/memo.js';
import { migrateToLatest, type Db } from '../../src/store/db.js';
import { getSetting, setSetting } from '../../src/store/repos/conversations.js';
import { waitFor } from '../helpers/harness.js';
import { openTestDatabase } from '../helpers/test-db.js';

const quiet = pino({ level: 'silent' });

describe('a settings memo', () => {
  let dir = '';
  let db: Db | null = null;
  afterEach(async () => {
    await db?.destroy().catch(() => undefined);
    db = null;
    if (dir) rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
  });

  async function open(): Promise<Db> {
    dir = mkdtempSync(path.join(os.tmpdir(), 'sb-memo-'));
    db = openTestDatabase(dir);
    await migrateToLatest(db);
    return db;
  }

  it('is read back by a new process over the same database, under the setting earlier versions wrote', async () => {
    const store = await open();
    await setSetting(store, 'slack.dm_thread.D1', '1700000000.000100');
    const first = new SettingsMemo(store, 'slack.dm_thread', quiet);
    expect(await first.get('D1')).toBe('1700000000.000100');
    expect(await first.get('D2')).toBeUndefined();
    first.set('D2', '1700000001.000200');
    expect(await first.get('D2')).toBe('1700000001.000200');
    await waitFor(
      async () => (await getSetting(store, 'slack.dm_thread.D2')) === '1700000001.000200',
      'the write-through',
    );
    const restarted = new SettingsMemo(store, 'slack.dm_thread', quiet);
    expect(await restarted.get('D2')).toBe('1700000001.000200');
    // Another memo's names are its own.
    expect(await new SettingsMemo(store, 'other', quiet).get('D2')).toBeUndefined();
  });

  it("sees another instance's change once it looks at the change counter again, and answers from memory until then", async () => {
    const store = await open();
    const looksEveryRead = new SettingsMemo(store, 'slack.dm_thread', quiet, 0);
    const looksHourly = new SettingsMemo(store, 'slack.dm_thread', quiet, 3_600_000);
    const other = new SettingsMemo(store, 'slack.dm_thread', quiet);
    other.set('D1', 'first');
    await waitFor(async () => (await getSetting(store, 'slack.dm_thread.D1')) === 'first', 'the first write');
    expect(await looksEveryRead.get('D1')).toBe('first');
    expect(await looksHourly.get('D1')).toBe('first');
    // The user moved to a new assistant thread; the message came in on the other instance.
    other.set('D1', 'second');
    await waitFor(async () => (await getSetting(store, 'slack.dm_thread.D1')) === 'second', 'the second write');
    expect(await looksEveryRead.get('D1')).toBe('second');
    expect(await looksHourly.get('D1')).toBe('first');
  });

  it('keeps a value set while it was still being read', async () => {
    const store = await open();
    await setSetting(store, 'm.k', 'old');
    const memo = new SettingsMemo(store, 'm', quiet);
    const reading = memo.get('k');
    memo.set('k', 'new');
    expect(await reading).toBe('new');
    await waitFor(async () => (await getSetting(store, 'm.k')) === 'new', 'the write-through');
    expect(await memo.get('k')).toBe('new');
  });

  it('keeps the value in memory and logs a warning when the store refuses the write', async () => {
    const store = await open();
    const warnings: string[] = [];
    const log = pino({ level: 'warn' }, { write: (line: string) => warnings.push(JSON.parse(line).msg as string) });
    const memo = new SettingsMemo(store, 'm', log);
    await store.destroy();
    db = null;
    expect(() => memo.set('k', 'v')).not.toThrow();
    expect(await memo.get('k')).toBe('v');
    await waitFor(() => warnings.includes('memo: could not save'), 'the warning');
  });
});
