/**
 * A job run's cards and questions belong to its own conversation (`job:<id>`), which nobody
 * reads; the people who decide them read the chat the job reports to. This keeps a copy of each
 * card there, as a ledger row of that conversation keyed `card:<id>:report`, brought up to date
 * whenever the run's card changes (decided, expired, answered: the ledger updates it in the
 * decision's own transaction, see `showApproval`). Its buttons carry the same approval or question
 * id, so a tap decides the run's row.
 */
import { approvalContent, questionContent } from '../delivery/content.js';
import { openCardOf, reportCardKey } from '../delivery/ledger.js';
import type { Db } from '../store/db.js';
import { getApproval, getQuestion } from '../store/repos/approvals.js';
import { upsertDelivery } from '../store/repos/deliveries.js';

export { reportCardKey };

/** Show (or bring up to date) the copy of an approval card in the reporting conversation. */
export async function mirrorApproval(
  db: Db,
  approvalId: string,
  reportConversationId: string,
  jobName: string,
): Promise<void> {
  const a = await getApproval(db, approvalId);
  if (!a) return;
  const content = approvalContent({ ...a, label: `[${jobName}] ${a.label}` });
  await upsertDelivery(db, {
    conversationId: reportConversationId,
    kind: 'card',
    key: reportCardKey(a.id),
    content: JSON.stringify(content),
    openCard: openCardOf(content),
  });
}

/** Show (or bring up to date) the copy of a question card in the reporting conversation. */
export async function mirrorQuestion(
  db: Db,
  questionId: string,
  reportConversationId: string,
  jobName: string,
): Promise<void> {
  const q = await getQuestion(db, questionId);
  if (!q) return;
  const content = questionContent({ ...q, question: `[${jobName}] ${q.question}` });
  await upsertDelivery(db, {
    conversationId: reportConversationId,
    kind: 'card',
    key: reportCardKey(q.id),
    content: JSON.stringify(content),
    openCard: openCardOf(content),
  });
}
