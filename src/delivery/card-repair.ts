/**
 * Cards brought to their outcome at start. A card's outcome is written with its decision, but a
 * database from an older version, a copy written apart from the decision, or a row given up after
 * a long run of transient failures can leave a message offering buttons for something decided,
 * expired or cancelled. Such rows get the outcome (with who decided) and are queued again, before
 * the presenter delivers what is owed.
 */
import type { ApprovalContent, QuestionContent } from '../contract/content.js';
import type { Db } from '../store/db.js';
import { getApproval, getQuestion } from '../store/repos/approvals.js';
import { abandonedCardRows, openCardRows, rewriteCard } from '../store/repos/deliveries.js';
import type { Delivery } from '../store/schema.js';
import { approvalContent, parseContent, questionContent } from './content.js';
import { rewriteCardRow } from './ledger.js';

/** The card a row shows, as its approval or question stands now (undefined when that row is gone). */
async function cardNow(db: Db, row: Delivery): Promise<ApprovalContent | QuestionContent | undefined> {
  const shown = parseContent(row.content);
  if (shown?.type === 'approval') {
    const a = await getApproval(db, shown.id);
    return a && approvalContent(a);
  }
  if (shown?.type === 'question') {
    const q = await getQuestion(db, shown.id);
    return q && questionContent(q);
  }
  return undefined;
}

/** What {@link repairCards} queued again. */
export interface CardRepair {
  /** Rows offering buttons for something no longer waiting: now showing the outcome. */
  settled: number;
  /** Rows given up after transient failures: queued for one more attempt. */
  retried: number;
}

/** Bring every card row that offers buttons for something decided to its outcome; retry abandoned cards. */
export async function repairCards(db: Db): Promise<CardRepair> {
  const out: CardRepair = { settled: 0, retried: 0 };
  for (const row of await openCardRows(db)) {
    const now = await cardNow(db, row);
    // Still waiting as shown (an approval waiting for its note shows that too): nothing to repair.
    if (!now || now.state === (parseContent(row.content) as ApprovalContent | QuestionContent).state) continue;
    await rewriteCardRow(db, row, now);
    out.settled++;
  }
  for (const row of await abandonedCardRows(db)) {
    await rewriteCard(db, row.id, row.content ?? '', row.open_card);
    out.retried++;
  }
  return out;
}
