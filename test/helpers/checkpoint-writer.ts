/**
 * A process that writes rows through the store for ever, printing each committed row's number,
 * for the checkpointer's crash test (it is killed mid-way, with the checkpoint worker running).
 * Usage: `node --import tsx test/helpers/checkpoint-writer.ts FILE`.
 */
import { sql } from 'kysely';
import { openSqlite } from '../../src/store/db.js';

const db = openSqlite(process.argv[2] as string);
await sql`CREATE TABLE IF NOT EXISTS rows (n INTEGER PRIMARY KEY, body TEXT NOT NULL)`.execute(db);
for (let n = 1; ; n++) {
  await sql`INSERT INTO rows (n, body) VALUES (${n}, ${'x'.repeat(2000)})`.execute(db);
  process.stdout.write(`${n}\n`);
  // A breath now and then, so the worker's checkpoints interleave with the commits.
  if (n % 50 === 0) await new Promise((r) => setTimeout(r, 5));
}
