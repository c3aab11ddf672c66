/**
 * Questions a running tool puts to the user (an MCP server's elicitation or sampling approval).
 * Like the question tool's, each is a row and a card in the conversation; unlike it, the answer
 * does not finish the tool call: the call that asked is still running in this process and reads
 * the answer from the row. The row names the waiting process (`waiter`); once that process is
 * gone (a restart, a crash) the server's request is gone with it, so the card is expired instead
 * of waiting for ever.
 */
import type { CoreEvent } from '../contract/events.js';
import { showQuestion } from '../delivery/ledger.js';
import { closeQuestion, createQuestion, getQuestion, waitedQuestions } from '../store/repos/approvals.js';
import type { Db } from '../store/db.js';
import type { Question } from '../store/schema.js';
import type { AskInput, AskOutcome } from '../tools/types.js';

/** How often a waiting tool looks at its question's row (another process may have answered it). */
const POLL_MS = 100;

/** Card wording of a question whose waiting process went away. */
const EXPIRED = 'Expired: switchboard restarted, and the request that asked this is gone.';

/** What asking needs. */
export interface ToolQuestionDeps {
  db: Db;
  emit(conversationId: string, event: CoreEvent): void;
  /** This process's holder id: the waiter named on the rows. */
  holder: string;
  /** True once this process is shutting down. */
  isClosing(): boolean;
}

/**
 * Put a question to the user and wait for the answer, the timeout or `signal` (stop, shutdown).
 * Resolves with the answer and who gave it, or `cancelled` / `timeout`; never rejects on those.
 */
export async function askFromTool(
  deps: ToolQuestionDeps,
  where: { conversationId: string; callId: string },
  input: AskInput,
  signal: AbortSignal,
): Promise<AskOutcome> {
  const { db } = deps;
  const q = await db.transaction().execute(async (trx) => {
    const created = await createQuestion(trx, {
      conversation_id: where.conversationId,
      tool_call_id: where.callId,
      question: input.question,
      suggested: input.answers,
      waiter: deps.holder,
    });
    await showQuestion(trx, created);
    return created;
  });
  deps.emit(where.conversationId, {
    type: 'question',
    id: q.id,
    question: q.question,
    suggestedAnswers: input.answers,
  });
  const deadline = Date.now() + input.timeoutMs;
  for (;;) {
    const row = await getQuestion(db, q.id);
    if (!row) return { kind: 'cancelled' };
    if (row.status === 'answered') return { kind: 'answered', answer: row.answer ?? '', by: row.answered_by ?? '' };
    if (row.status !== 'pending') return { kind: 'cancelled' };
    if (signal.aborted) {
      // `stop` closes the card itself; what is left is shutdown, which takes the request with it.
      await closeWaited(deps, row, deps.isClosing() ? EXPIRED : 'The request ended before an answer.');
      return { kind: 'cancelled' };
    }
    if (Date.now() >= deadline) {
      await closeWaited(deps, row, `No answer within ${Math.round(input.timeoutMs / 1000)} s: cancelled.`);
      return { kind: 'timeout' };
    }
    await sleep(Math.min(POLL_MS, Math.max(1, deadline - Date.now())), signal);
  }
}

/** Expire questions whose waiting process is gone (its tool call, and the server's request, died with it). */
export async function expireOrphanedQuestions(
  deps: ToolQuestionDeps,
  isGone: (holder: string) => boolean,
): Promise<number> {
  let expired = 0;
  for (const q of await waitedQuestions(deps.db)) {
    if (q.waiter === deps.holder || !q.waiter || !isGone(q.waiter)) continue;
    if (await closeWaited(deps, q, EXPIRED)) expired++;
  }
  return expired;
}

/** Close a waited question as cancelled, with `why` on its card. */
async function closeWaited(deps: ToolQuestionDeps, q: Question, why: string): Promise<boolean> {
  const closed = await deps.db.transaction().execute(async (trx) => {
    if (!(await closeQuestion(trx, q.id, 'cancelled', null, null))) return false;
    await showQuestion(
      trx,
      { ...q, question: `${q.question}\n⌛ ${why}` },
      { state: 'cancelled', answer: null, by: null },
    );
    return true;
  });
  if (closed)
    deps.emit(q.conversation_id, { type: 'question_resolved', id: q.id, status: 'cancelled', answer: null, by: null });
  return closed;
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}
