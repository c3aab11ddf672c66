/** Reading the delivery ledger in tests. */
import { cardKey } from '../../src/delivery/ledger.js';
import { parseRefs } from '../../src/delivery/render.js';
import type { Db } from '../../src/store/db.js';
import { deliveryByKey } from '../../src/store/repos/deliveries.js';

/** Platform references of an approval's or question's card once delivered, else undefined. */
export async function deliveredCardRefs(db: Db, id: string): Promise<string[] | undefined> {
  const row = await deliveryByKey(db, cardKey(id));
  if (row?.status !== 'delivered') return undefined;
  return parseRefs(row.refs).map((r) => r.ref);
}
