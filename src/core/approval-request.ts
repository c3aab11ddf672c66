/**
 * Asking a person about one tool call: an approval row bound to the call's exact arguments (the
 * sha256 of their canonical JSON) with the tool's whole preview, and its card, in one
 * transaction. A card still open for other arguments of the same call is closed first, so only
 * a card showing what will run can decide it.
 */
import { createApproval, decideApprovalRow } from '../store/repos/approvals.js';
import { transitionToolCall } from '../store/repos/turns.js';
import type { Approval, ToolCallRow } from '../store/schema.js';
import { showApproval } from '../delivery/ledger.js';
import type { EngineDeps } from './deps.js';
import { alwaysScopeText } from '../delivery/grant-words.js';
import { GRANT_VERSION } from './rules.js';

/** What the card asks about. */
export interface ApprovalAsk {
  conversationId: string;
  call: ToolCallRow;
  tool: string;
  label: string;
  /** The tool's whole preview of the arguments. */
  preview: string;
  requester: string;
  /** The workspace-relative path of a file tool's call, else null. */
  targetPath: string | null;
  /** The call's grant key in the current grant version (null for a path-scoped call). */
  grantArgs: string | null;
  /** `argumentsHash` of the arguments the card shows. */
  argsHash: string;
  /** Seconds to decide; 0: no limit. */
  timeoutSeconds: number;
  /** An earlier approval of this call and attempt, made for other arguments. */
  previous?: Approval;
}

/** Create the approval and its card, moving the call to `awaiting_approval`; emits `approval_requested`. */
export async function requestApproval(
  deps: Pick<EngineDeps, 'db' | 'emit' | 'metrics'>,
  ask: ApprovalAsk,
): Promise<Approval> {
  const { db } = deps;
  const { previous } = ask;
  let closedPrevious = false;
  const approval = await db.transaction().execute(async (trx) => {
    if (previous && (await decideApprovalRow(trx, previous.id, ['pending', 'awaiting_note'], 'cancelled', {}))) {
      await showApproval(trx, previous, { state: 'cancelled', scope: null, by: null });
      closedPrevious = true;
    }
    const created = await createApproval(trx, {
      conversation_id: ask.conversationId,
      tool_call_id: ask.call.id,
      attempt: ask.call.attempt,
      tool_name: ask.tool,
      label: ask.call.attempt > 0 ? `${ask.label} (re-run after a restart)` : ask.label,
      preview: ask.preview,
      requester: ask.requester,
      target_path: ask.targetPath,
      grant_args: ask.grantArgs,
      grant_version: GRANT_VERSION,
      args_sha256: ask.argsHash,
      expires_at: ask.timeoutSeconds > 0 ? Date.now() + ask.timeoutSeconds * 1000 : null,
    });
    await transitionToolCall(trx, ask.call.id, ['pending'], 'awaiting_approval');
    await showApproval(trx, created);
    return created;
  });
  if (previous && closedPrevious) {
    deps.metrics.pendingApprovals.dec();
    deps.emit(ask.conversationId, {
      type: 'approval_resolved',
      id: previous.id,
      decision: 'cancelled',
      scope: null,
      by: null,
      note: null,
      label: previous.label,
    });
  }
  deps.metrics.pendingApprovals.inc();
  deps.emit(ask.conversationId, {
    type: 'approval_requested',
    id: approval.id,
    callId: ask.call.id,
    tool: ask.tool,
    label: approval.label,
    preview: ask.preview,
    requester: ask.requester,
    alwaysCovers: alwaysScopeText(ask.tool, approval.target_path, approval.grant_args),
  });
  return approval;
}
