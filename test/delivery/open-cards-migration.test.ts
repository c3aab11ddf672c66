/**
 * `deliveries.open_card` on a database written before it: the migration marks the card rows whose
 * content still offers buttons (pending, or waiting for a denial's note), and only those, so the
 * start-up repair finds them; on SQLite and PostgreSQL alike.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import * as openCards from '../../migrations/2026-12-05T01-00_open-cards.js';
import { type Db, migrateToLatest } from '../../src/store/db.js';
import { openCardRows } from '../../src/store/repos/deliveries.js';
import { openTestDatabase } from '../helpers/test-db.js';

let dir: string;
let db: Db;

beforeEach(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'sb-open-cards-'));
  db = openTestDatabase(dir);
  await migrateToLatest(db);
});

afterEach(async () => {
  await db.destroy();
  rmSync(dir, { recursive: true, force: true });
});

/** A delivery row as an older version wrote it (no `open_card`). */
async function oldRow(key: string, kind: string, content: unknown): Promise<void> {
  await sql`INSERT INTO deliveries (conversation_id, kind, idem_key, content, status, created_at, updated_at)
    VALUES ('c1', ${kind}, ${key}, ${JSON.stringify(content)}, 'delivered', 1, 1)`.execute(db);
}

describe('open_card on rows written before it', () => {
  it('marks the cards offering buttons, and nothing else', async () => {
    await openCards.down(db);
    await sql`DELETE FROM kysely_migration WHERE name = '2026-12-05T01-00_open-cards'`.execute(db);
    await oldRow('card:a1', 'card', { type: 'approval', id: 'a1', state: 'pending', label: 'bash ls' });
    await oldRow('card:a2', 'card', { type: 'approval', id: 'a2', state: 'awaiting_note', label: 'bash ls' });
    await oldRow('card:a3', 'card', { type: 'approval', id: 'a3', state: 'approved', label: 'bash ls' });
    await oldRow('card:q1', 'card', { type: 'question', id: 'q1', state: 'pending', question: 'Which?' });
    await oldRow('card:q2', 'card', { type: 'question', id: 'q2', state: 'answered', question: 'Which?' });
    await oldRow('reply:t1:0', 'reply', { type: 'text', markdown: 'pending' });
    await sql`INSERT INTO deliveries (conversation_id, kind, idem_key, content, status, created_at, updated_at)
      VALUES ('c1', 'card', 'card:broken', 'not json', 'delivered', 1, 1)`.execute(db);

    expect(await migrateToLatest(db)).toEqual(['2026-12-05T01-00_open-cards']);
    const open = await openCardRows(db);
    expect(open.map((r) => [r.idem_key, r.open_card]).sort()).toEqual([
      ['card:a1', 'a1'],
      ['card:a2', 'a2'],
      ['card:q1', 'q1'],
    ]);
  });
});
