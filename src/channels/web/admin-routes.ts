/**
 * The operator console's API (`/admin`, admins only): what is pending in every conversation
 * (decidable here), jobs, stored approval rules, pairing requests, tool servers and deliveries
 * that failed. Reads come from the store; every action is the core's own call, made as this admin.
 */
import type http from 'node:http';
import {
  visibleText,
  approvalContent,
  questionContent,
  ruleLine,
  listPendingCodes,
  allPendingApprovals,
  allPendingQuestions,
  failedDeliveries,
} from '../../kit/index.js';
import type { ChannelCore, Db, Conversation, WebSession } from '../../kit/index.js';
import { act, principal } from './chat-routes.js';
import { field, json, readJson } from './http.js';

const where = (c: Conversation) => `${c.channel}:${c.chat_key}${c.thread_key ? `/${c.thread_key}` : ''}`;

/** `GET /api/admin/state`: everything the console shows. */
export async function adminState(db: Db, core: ChannelCore, res: http.ServerResponse, s: WebSession): Promise<void> {
  const by = principal(s);
  const { jobs: jobControls, rules: ruleControls } = core.admin;
  const jobList = jobControls ? jobControls.list(by) : Promise.resolve([]);
  const [approvals, questions, jobs, rules, codes, failed] = await Promise.all([
    allPendingApprovals(db),
    allPendingQuestions(db),
    jobList,
    ruleControls.list(by),
    listPendingCodes(db, Date.now()),
    failedDeliveries(db),
  ]);
  json(res, 200, {
    approvals: approvals.map(({ approval, conversation }) => ({
      ...approvalContent(approval),
      // The whole arguments with invisible and direction characters marked, as on every card.
      preview: visibleText(approval.preview),
      label: visibleText(approval.label),
      conversation: where(conversation),
    })),
    questions: questions.map(({ question, conversation }) => ({
      ...questionContent(question),
      conversation: where(conversation),
    })),
    jobs: jobs.map((j) => ({
      id: j.id,
      name: j.name,
      state: j.state,
      schedule: j.cron ?? (j.run_at ? new Date(j.run_at).toISOString() : ''),
      next: j.next_run_at,
      owner: j.owner_id,
    })),
    rules: rules.map((r) => ({ id: r.id, text: ruleLine(r) })),
    pairing: codes.map((c) => ({
      code: c.code,
      channel: c.channel,
      user: c.user_id,
      name: c.display_name,
      expires: c.expires_at,
    })),
    mcp: core.admin
      .toolSources()
      .filter((t) => t.name.startsWith('mcp:'))
      .map((t) => ({ name: t.name.slice(4), state: t.state, tools: t.tools, error: t.error ?? null })),
    failed: failed.map((d) => ({
      id: d.id,
      kind: d.kind,
      conversation: d.conversation_id,
      status: d.status,
      error: d.last_error,
      at: d.updated_at,
    })),
  });
}

/** `POST /api/admin/action`: `{type: "revoke", id}` revokes a rule; `{action}` is a button, as in the chat. */
export async function adminAction(
  core: ChannelCore,
  req: http.IncomingMessage,
  res: http.ServerResponse,
  s: WebSession,
): Promise<void> {
  const body = await readJson(req);
  let out: { ok: boolean; message: string };
  if (body.type === 'revoke') {
    const r = await core.admin.rules.revoke(Number(field(body, 'id')), principal(s));
    out = r.ok ? { ok: true, message: `Revoked rule #${r.rule.id}.` } : { ok: false, message: r.reason };
  } else out = await act(core, body, principal(s));
  json(res, out.ok ? 200 : 409, out);
}
