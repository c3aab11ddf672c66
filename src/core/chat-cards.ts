/**
 * The open cards of a chat: its own pending approvals and questions and those of its unfinished
 * sub-agents, which appear in the same chat (for typed notes and answers, and for `/status`).
 */
import type { Db } from '../store/db.js';
import { openApprovals, pendingQuestions } from '../store/repos/approvals.js';
import { descendantsOf } from '../store/repos/subagents.js';
import type { Approval, Question } from '../store/schema.js';

/** Open approvals and pending questions of a conversation and its live descendants; questions oldest first. */
export async function openCards(
  db: Db,
  conversationId: string,
): Promise<{ approvals: Approval[]; questions: Question[] }> {
  const live = (await descendantsOf(db, conversationId)).filter((c) => c.agent_state !== 'finished');
  const ids = [conversationId, ...live.map((c) => c.id)];
  const [approvals, questions] = await Promise.all([
    Promise.all(ids.map((id) => openApprovals(db, id))).then((l) => l.flat()),
    Promise.all(ids.map((id) => pendingQuestions(db, id))).then((l) => l.flat()),
  ]);
  return { approvals, questions: questions.sort((a, b) => a.created_at - b.created_at) };
}
