/**
 * `deliveries.open_card`: the approval or question whose buttons a row's content offers (null
 * for every other row, and for a card once it shows its outcome). At start the cards still
 * offering buttons for something decided are found through a small index instead of reading every
 * card row; rows written before this column are filled in here from their content.
 * Frozen: never edit after release; add a new migration instead.
 */
import { type Kysely, sql } from 'kysely';

/** The id of a card whose content offers buttons (pending, or an approval waiting for its note). */
function openCardOf(content: string | null): string | null {
  try {
    const c = JSON.parse(content ?? '') as { type?: string; id?: string; state?: string };
    if (c.type === 'approval' && (c.state === 'pending' || c.state === 'awaiting_note')) return c.id ?? null;
    if (c.type === 'question' && c.state === 'pending') return c.id ?? null;
  } catch {
    // An unreadable row offers nothing.
  }
  return null;
}

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('deliveries').addColumn('open_card', 'text').execute();
  await sql`CREATE INDEX deliveries_open_cards ON deliveries (open_card) WHERE open_card IS NOT NULL`.execute(db);
  const cards = await db.selectFrom('deliveries').select(['id', 'content']).where('kind', '=', 'card').execute();
  for (const row of cards) {
    const id = openCardOf(row.content);
    if (id) await db.updateTable('deliveries').set({ open_card: id }).where('id', '=', row.id).execute();
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP INDEX deliveries_open_cards`.execute(db);
  await db.schema.alterTable('deliveries').dropColumn('open_card').execute();
}
