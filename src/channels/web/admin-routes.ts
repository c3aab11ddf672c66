/**
 * The operator console's API (`/admin`, admins only): what is pending in every conversation
 * (decidable here), jobs, stored approval rules, pairing requests, tool servers and deliveries
 * that failed. Reads come from the store; every action is the core's own call, made as this admin.
 */
import type http from 'node:http';
import type { CoreApi, JobOp } from '../../contract/core.js';
import { approvalContent, questionContent } from '../../delivery/content.js';
import { ruleLine } from '../../core/rules.js';
import type { Db } from '../../store/db.js';
import { listPendingCodes } from '../../store/repos/pairing.js';
import { allPendingApprovals, allPendingQuestions, failedDeliveries } from '../../store/repos/web.js';
import type { Conversation, WebSession } from '../../store/schema.js';
import { decide, principal } from './chat-routes.js';
import { field, HttpRefusal, json, readJson } from './http.js';

const where = (c: Conversation) => `${c.channel}:${c.chat_key}${c.thread_key ? `/${c.thread_key}` : ''}`;

/** `GET /api/admin/state`: everything the console shows. */
export async function adminState(db: Db, core: CoreApi, res: http.ServerResponse, s: WebSession): Promise<void> {
  const by = principal(s);
  const [approvals, questions, jobs, rules, codes, failed] = await Promise.all([
    allPendingApprovals(db),
    allPendingQuestions(db),
    core.jobs ? core.jobs.list(by) : Promise.resolve([]),
    core.listRules(by),
    listPendingCodes(db, Date.now()),
    failedDeliveries(db),
  ]);
  json(res, 200, {
    approvals: approvals.map(({ approval, conversation }) => ({ ...approvalContent(approval), conversation: where(conversation) })),
    questions: questions.map(({ question, conversation }) => ({ ...questionContent(question), conversation: where(conversation) })),
    jobs: jobs.map((j) => ({ id: j.id, name: j.name, state: j.state, schedule: j.cron ?? (j.run_at ? new Date(j.run_at).toISOString() : ''), next: j.next_run_at, owner: j.owner_id })),
    rules: rules.map((r) => ({ id: r.id, text: ruleLine(r) })),
    pairing: codes.map((c) => ({ code: c.code, channel: c.channel, user: c.user_id, name: c.display_name, expires: c.expires_at })),
    mcp: core
      .toolSources()
      .filter((t) => t.name.startsWith('mcp:'))
      .map((t) => ({ name: t.name.slice(4), state: t.state, tools: t.tools, error: t.error ?? null })),
    failed: failed.map((d) => ({ id: d.id, kind: d.kind, conversation: d.conversation_id, status: d.status, error: d.last_error, at: d.updated_at })),
  });
}

const JOB_OPS = new Set<JobOp>(['pause', 'resume', 'run', 'delete']);

/** `POST /api/admin/action {type, …}`: decide, answer, act on a job, revoke a rule, approve pairing. */
export async function adminAction(core: CoreApi, req: http.IncomingMessage, res: http.ServerResponse, s: WebSession): Promise<void> {
  const body = await readJson(req);
  const by = principal(s);
  const type = field(body, 'type');
  let out: { ok: boolean; message?: string };
  if (type === 'job') {
    const op = field(body, 'op') as JobOp;
    if (!JOB_OPS.has(op)) throw new HttpRefusal(400, 'op: pause, resume, run or delete');
    out = core.jobs ? await core.jobs.act(field(body, 'id'), op, by) : { ok: false, message: 'Scheduled jobs are not available here.' };
  } else if (type === 'revoke') {
    const r = await core.revokeRule(Number(field(body, 'id')), by);
    out = r.ok ? { ok: true, message: `Revoked rule #${r.rule.id}.` } : { ok: false, message: r.reason };
  } else if (type === 'pair') {
    const r = await core.approvePairing(field(body, 'code'), by);
    out = r.ok ? { ok: true, message: `Let in ${r.channel}:${r.userId}.` } : { ok: false, message: r.reason };
  } else out = await decide(core, body, by);
  json(res, out.ok ? 200 : 409, out);
}
