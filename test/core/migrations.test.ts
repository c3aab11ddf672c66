/**
 * The migrations folder on a fresh database and on one that ran a later-named migration first
 * (deliveries and rule-scope were written in parallel; a database may have either one alone).
 */
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { MIGRATIONS_DIR, migrateToLatest, openSqlite, type Db } from '../../src/store/db.js';

const DELIVERIES = '2026-12-01T01-00_deliveries';
const RULE_SCOPE = '2026-12-01T02-00_rule-scope';
const INBOUND_JOURNAL = '2026-12-01T10-00_inbound-journal';

let db: Db | undefined;
afterEach(async () => {
  await db?.destroy();
  db = undefined;
});

async function columns(d: Db, table: string): Promise<string[]> {
  const r = await sql<{ name: string }>`SELECT name FROM pragma_table_info(${table})`.execute(d);
  return r.rows.map((c) => c.name);
}

async function executed(d: Db): Promise<string[]> {
  const r = await sql<{ name: string }>`SELECT name FROM kysely_migration ORDER BY name`.execute(d);
  return r.rows.map((m) => m.name);
}

describe('migrations', () => {
  it('apply in name order on a fresh database: deliveries, then rule scope', async () => {
    db = openSqlite(':memory:');
    const applied = await migrateToLatest(db);
    const files = readdirSync(MIGRATIONS_DIR)
      .filter((f) => /\.(ts|js)$/.test(f))
      .map((f) => f.replace(/\.[^.]+$/, ''))
      .sort();
    expect(applied).toEqual(files);
    expect(applied.indexOf(DELIVERIES)).toBeLessThan(applied.indexOf(RULE_SCOPE));
    expect(await columns(db, 'deliveries')).toContain('idem_key');
    expect(await columns(db, 'approvals')).toContain('target_path');
    expect(await columns(db, 'approval_rules')).toContain('user_id');
    expect(await columns(db, 'pairing_codes')).toContain('welcomed_at');
    expect(await migrateToLatest(db)).toEqual([]);
  });

  it('a database that ran rule scope before deliveries existed gets deliveries, keeping its data', async () => {
    db = openSqlite(':memory:');
    await migrateToLatest(db);
    // Roll back to the state of a database migrated before the deliveries migration was written.
    await db.schema.dropTable('deliveries').execute();
    await sql`DELETE FROM kysely_migration WHERE name = ${DELIVERIES}`.execute(db);
    await db
      .insertInto('approval_rules')
      .values({
        tool_glob: 'read_file',
        path_glob: 'a.txt',
        action: 'allow',
        priority: 0,
        conversation_id: null,
        user_id: 'telegram:1',
        created_by: 'telegram:1',
        created_at: 1,
      })
      .execute();

    expect(await migrateToLatest(db)).toEqual([DELIVERIES]);
    expect(await columns(db, 'deliveries')).toContain('idem_key');
    expect(await executed(db)).toContain(RULE_SCOPE);
    const rules = await db.selectFrom('approval_rules').selectAll().execute();
    expect(rules).toMatchObject([{ tool_glob: 'read_file', path_glob: 'a.txt', user_id: 'telegram:1' }]);
  });

  it('an up-to-date database is recognised without importing a migration; any difference goes through the migrator', async () => {
    const root = mkdtempSync(path.join(os.tmpdir(), 'sb-migrations-'));
    const write = (folder: string, name: string, body: string) =>
      writeFileSync(path.join(root, folder, `${name}.mjs`), body);
    const creates = (table: string) =>
      `export async function up(db) { await db.schema.createTable('${table}').addColumn('id', 'integer').execute(); }\n`;
    try {
      for (const folder of ['built', 'unreadable']) mkdirSync(path.join(root, folder));
      db = openSqlite(':memory:');
      write('built', 'm1', creates('t1'));
      write('built', 'm2', creates('t2'));
      expect(await migrateToLatest(db, path.join(root, 'built'))).toEqual(['m1', 'm2']);
      // Up to date: no migration module is imported (these would throw; never imported before,
      // so no module cache hides it).
      write('unreadable', 'm1', "throw new Error('m1 imported');\n");
      write('unreadable', 'm2', "throw new Error('m2 imported');\n");
      expect(await migrateToLatest(db, path.join(root, 'unreadable'))).toEqual([]);
      // A new migration: applied, the applied ones left alone.
      write('built', 'm3', creates('t3'));
      expect(await migrateToLatest(db, path.join(root, 'built'))).toEqual(['m3']);
      expect(await executed(db)).toEqual(['m1', 'm2', 'm3']);
      // A migration the database ran but the folder lacks (an older build): still refused.
      rmSync(path.join(root, 'built', 'm3.mjs'));
      await expect(migrateToLatest(db, path.join(root, 'built'))).rejects.toThrow(/m3 is missing/);
    } finally {
      rmSync(root, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
    }
  });

  it('moves a Telegram update journal kept in settings (the old form) into inbound_journal rows', async () => {
    db = openSqlite(':memory:');
    await migrateToLatest(db);
    await db.schema.dropTable('inbound_journal').execute();
    await sql`DELETE FROM kysely_migration WHERE name = ${INBOUND_JOURNAL}`.execute(db);
    const old = [
      { update_id: 41, message: { text: 'first' } },
      { update_id: 42, message: { text: 'second' } },
      { note: 'no update id: skipped' },
    ];
    await db
      .insertInto('settings')
      .values({ key: 'telegram.update_journal', value: JSON.stringify(old), updated_at: 1 })
      .execute();
    await db.insertInto('settings').values({ key: 'telegram.home_chat', value: 'kept', updated_at: 1 }).execute();

    expect(await migrateToLatest(db)).toEqual([INBOUND_JOURNAL]);
    const rows = await db
      .selectFrom('inbound_journal')
      .select(['source', 'update_id', 'payload'])
      .orderBy('update_id')
      .execute();
    expect(rows.map((r) => [r.source, r.update_id, JSON.parse(r.payload).message.text])).toEqual([
      ['telegram', 41, 'first'],
      ['telegram', 42, 'second'],
    ]);
    const settings = await db.selectFrom('settings').select('key').execute();
    expect(settings.map((r) => r.key)).toEqual(['telegram.home_chat']);
  });
});
