/**
 * Sub-agents. `task {prompt, tools?}` starts a child agent with the write-capable tool set that
 * runs to completion and returns its summary; `plan {prompt}` starts one with read-only tools whose
 * answer is written to a plan file that the user accepts, rejects or annotates before the parent
 * continues.
 *
 * A child is a conversation of its own (row: parent, parent call, depth, state) running ordinary
 * turns, so approvals, questions, stop and crash recovery work as for any turn. The parent's call
 * stays `running` while the child works — a row, not a promise — and the child's end finishes
 * it. Its events reach the parent's chat labelled with the child; only the parent turn's requester
 * and admins decide its approvals (the child's turn has the same requester).
 */
import { writeAtomic } from '../tools/confined/write.js';
import path from 'node:path';
import picomatch from 'picomatch';
import { z } from 'zod';
import { errorMessage } from '../errors.js';
import { createQuestion, questionForCall } from '../store/repos/approvals.js';
import { enqueueInbox } from '../store/repos/log.js';
import {
  childOfCall,
  childrenOf,
  createChild,
  finalReply,
  hasInbox,
  latestTurn,
  moveAgentState,
} from '../store/repos/subagents.js';
import { activeTurn, getToolCall, transitionToolCall } from '../store/repos/turns.js';
import type { Conversation, ToolCallRow, Turn } from '../store/schema.js';
import { clip, defineTool } from '../tools/define.js';
import type { AnyTool, ToolCategory } from '../tools/types.js';
import type { EngineDeps } from './deps.js';
import type { CoreEvent } from '../contract/events.js';

export const TASK_TOOL = 'task';
export const PLAN_TOOL = 'plan';

/** True for the tools the engine turns into child agents. */
export function isSubAgentTool(name: string): boolean {
  return name === TASK_TOOL || name === PLAN_TOOL;
}

/** Tools a child never gets, whatever they declare: they act for the user beyond the task. */
const NEVER_FOR_CHILDREN: ReadonlySet<string> = new Set(['schedule_job', 'cancel_job', 'notify']);

/** Categories a `plan` child may use: it looks, it does not touch. */
const PLAN_CATEGORIES: ReadonlySet<ToolCategory> = new Set(['read', 'network', 'misc', 'interaction']);

const taskSchema = z.object({
  prompt: z.string().min(1).max(20_000).describe('The whole assignment: the sub-agent sees nothing else of this chat'),
  tools: z
    .array(z.string().min(1))
    .max(50)
    .optional()
    .describe('Limit the sub-agent to these tool names (globs such as "mcp__files__*")'),
});

/** `task`: intercepted by the engine (the call waits for the child). */
export const taskTool = defineTool({
  name: TASK_TOOL,
  description:
    'Delegate a self-contained piece of work to a sub-agent with its own context and the file, shell and web tools. ' +
    'It works until done and returns a summary. Several task calls in one step run in parallel.',
  schema: taskSchema,
  meta: { category: 'interaction', defaultApproval: 'allow', primaryKey: 'prompt', subAgent: true, source: 'core' },
  describe: (a) => `task ${a.prompt}`,
  async execute() {
    throw new Error(`${TASK_TOOL} is handled by the turn engine and cannot run on its own`);
  },
});

/** `plan`: a read-only child whose plan the user reviews. */
export const planTool = defineTool({
  name: PLAN_TOOL,
  description:
    'Have a sub-agent investigate with read-only tools and write a step-by-step plan; the user accepts, rejects or ' +
    'annotates it before you continue. Use it before large or risky changes.',
  schema: z.object({
    prompt: z.string().min(1).max(20_000).describe('What to plan, with everything the planner needs to know'),
  }),
  meta: { category: 'interaction', defaultApproval: 'allow', primaryKey: 'prompt', source: 'core' },
  describe: (a) => `plan ${a.prompt}`,
  async execute() {
    throw new Error(`${PLAN_TOOL} is handled by the turn engine and cannot run on its own`);
  },
});

/** Workspace-relative file a plan is written to. */
export function planPath(callId: string): string {
  return path.join('plans', `plan-${callId}.md`);
}

/** Instructions added to a child's system prompt. */
export function childInstructions(conv: Conversation): string | null {
  if (!conv.parent_id) return null;
  if (conv.agent_kind === 'plan') {
    return (
      'You are a planning sub-agent. Investigate with your read-only tools, change nothing, and answer with a concise ' +
      'step-by-step plan in Markdown. Your answer is the plan the user will review.'
    );
  }
  return (
    'You are a sub-agent working on one assignment for another agent. Work on your own until it is done, then answer ' +
    'with a short summary of what you did and found: that answer is all the other agent sees.'
  );
}

/**
 * Whether a conversation may use a tool: chats use every tool; a child only tools that declare
 * `subAgent`, a `plan` child only looking ones, no `task` at the depth limit, and within the
 * tool list its parent gave.
 */
export function toolAllowed(conv: Conversation, tool: AnyTool, maxDepth: number): boolean {
  if (isSubAgentTool(tool.name) && conv.depth >= maxDepth) return false;
  if (!conv.parent_id) return true;
  if (!tool.meta.subAgent || NEVER_FOR_CHILDREN.has(tool.name)) return false;
  if (conv.agent_kind === 'plan' && (!PLAN_CATEGORIES.has(tool.meta.category) || tool.name === TASK_TOOL)) return false;
  if (conv.agent_tools) {
    const allowed = JSON.parse(conv.agent_tools) as string[];
    // The question tool stays: a child that needs to ask should be able to.
    if (tool.meta.category !== 'interaction' && !allowed.some((g) => picomatch.isMatch(tool.name, g))) return false;
  }
  return true;
}

/** The chat side of a child's event: labelled with the child, or null when the chat need not see it. */
export function presentChildEvent(child: Conversation, event: CoreEvent): CoreEvent | null {
  const label = child.agent_label ?? 'sub-agent';
  switch (event.type) {
    case 'tool_started':
      return { ...event, label: `🤖 ${label} → ${event.label}` };
    case 'error':
      return { ...event, message: `🤖 ${label}: ${event.message}` };
    // The child's text is its answer to the parent, not to the user; its turn is part of the parent's.
    case 'delta':
    case 'reply':
    case 'turn_started':
    case 'turn_done':
      return null;
    default:
      return event;
  }
}

/** The label of a child: `task: <short prompt>`. */
export function agentLabel(kind: 'task' | 'plan', prompt: string): string {
  return `${kind}: ${clip(prompt, 40)}`;
}

/** What the model is told after the user reviewed a plan. */
export function planAnswerText(answer: string, callId: string, plan: string | null): string {
  const file = planPath(callId);
  const verdict = answer.trim().toLowerCase();
  if (['accept', 'accepted', 'yes', 'ok'].includes(verdict)) {
    return `The user accepted the plan (saved at ${file}). Carry it out.\n\n${plan ?? ''}`;
  }
  if (['reject', 'rejected', 'no'].includes(verdict)) {
    return `The user rejected the plan (${file}). Do not carry it out; ask what they want instead.`;
  }
  return `The user annotated the plan (${file}): ${answer}\nRevise the plan accordingly before acting.\n\n${plan ?? ''}`;
}

/** Starts, tracks and finishes child agents. */
export class SubAgents {
  /** Slot filling per parent runs one at a time, so parallel spawns cannot over-fill. */
  private readonly slotLocks = new Map<string, Promise<void>>();

  constructor(private readonly deps: EngineDeps) {}

  /** Create the child of a `task`/`plan` call (its call is now `running`) and start it when a slot is free. */
  async spawn(
    parent: Conversation,
    turn: Turn,
    call: ToolCallRow,
    args: { prompt: string; tools?: string[] },
  ): Promise<void> {
    const kind = call.name === PLAN_TOOL ? 'plan' : 'task';
    const child = await createChild(this.deps.db, {
      parent,
      callId: call.id,
      kind,
      label: agentLabel(kind, args.prompt),
      prompt: args.prompt,
      tools: args.tools ?? null,
    });
    this.deps.log.info({ conversationId: parent.id, child: child.id, kind }, 'sub-agent created');
    await this.fillSlots(parent.id, turn.requester_id);
  }

  /** Start queued children of a parent while fewer than `subagents.parallel` run; in call order. */
  private fillSlots(parentId: string, requester: string): Promise<void> {
    const previous = this.slotLocks.get(parentId) ?? Promise.resolve();
    const next = previous.then(() => this.fillSlotsNow(parentId, requester));
    const settled = next.catch(() => {});
    this.slotLocks.set(parentId, settled);
    void settled.then(() => {
      if (this.slotLocks.get(parentId) === settled) this.slotLocks.delete(parentId);
    });
    return next;
  }

  private async fillSlotsNow(parentId: string, requester: string): Promise<void> {
    const { db, config } = this.deps;
    const children = await childrenOf(db, parentId);
    let running = children.filter((c) => c.agent_state === 'running').length;
    for (const child of children) {
      if (running >= config.subagents.parallel) break;
      if (child.agent_state !== 'queued') continue;
      const call = child.parent_call_id ? await getToolCall(db, child.parent_call_id) : undefined;
      if (call?.status !== 'running') {
        // The parent's call was cancelled before the child got a slot.
        await moveAgentState(db, child.id, ['queued'], 'finished', 'Cancelled before it started.');
        continue;
      }
      // One transaction: a child seen `running` always has its prompt queued (or a turn), so a
      // concurrent reconcile never takes a child between the two writes for one that ended.
      const started = await db.transaction().execute(async (trx) => {
        if (!(await moveAgentState(trx, child.id, ['queued'], 'running'))) return false;
        await enqueueInbox(trx, { conversationId: child.id, authorId: requester, text: child.agent_prompt ?? '' });
        return true;
      });
      if (!started) continue;
      running++;
      this.deps.wake(child.id);
    }
  }

  /**
   * Decide a `running` task/plan call of the parent's tool phase: still waiting for its child (or
   * the user's review), or finished now. Rebuilds what a crash may have cut short: a child never
   * created, a child never started, a child whose end was not yet handed to the parent.
   */
  async reconcile(parent: Conversation, turn: Turn, call: ToolCallRow): Promise<'wait' | 'final'> {
    const { db } = this.deps;
    const child = await childOfCall(db, call.id);
    if (!child) {
      const parsed = taskSchema.safeParse(JSON.parse(call.args || '{}'));
      if (!parsed.success)
        return this.failCall(parent.id, call, 'Error: the sub-agent could not be started (invalid arguments).');
      await this.spawn(parent, turn, call, parsed.data);
      return 'wait';
    }
    if (child.agent_state === 'queued') {
      await this.fillSlots(parent.id, turn.requester_id);
      return 'wait';
    }
    // Inbox before turn: a turn starts by consuming the inbox in one transaction, so reading in
    // this order cannot miss a child whose turn starts between the two reads.
    if (child.agent_state === 'running' && ((await hasInbox(db, child.id)) || (await activeTurn(db, child.id)))) {
      this.deps.wake(child.id);
      return 'wait';
    }
    // The parent is running this very check: no need to wake it (that would loop).
    await this.childEnded(child.id, false);
    const fresh = await getToolCall(db, call.id);
    return fresh?.status === 'running' ? 'wait' : 'final';
  }

  /**
   * A child's turn ended (done, failed or cancelled): record its result, finish the parent's call
   * (or, for a plan, put it to the user), start a queued sibling and wake the parent. Idempotent.
   */
  async childEnded(childId: string, wakeParent = true): Promise<void> {
    const { db } = this.deps;
    const child = await this.deps.conversation(childId);
    if (!child?.parent_id || !child.parent_call_id) return;
    const turn = await latestTurn(db, child.id);
    const status = turn?.status === 'done' ? 'done' : turn?.status === 'cancelled' ? 'cancelled' : 'failed';
    const reply = status === 'done' ? await finalReply(db, child.id) : null;
    const result =
      status === 'done'
        ? (reply ?? '(the sub-agent gave no answer)')
        : status === 'cancelled'
          ? 'The sub-agent was cancelled.'
          : `The sub-agent failed: ${turn?.error ?? 'unknown error'}`;
    await moveAgentState(db, child.id, ['queued', 'running'], 'finished', result);
    const call = await getToolCall(db, child.parent_call_id);
    if (call?.status === 'running') {
      if (child.agent_kind === 'plan' && status === 'done') await this.reviewPlan(child, call, result);
      else await this.finishCall(child.parent_id, call, status, result);
    }
    const parentTurn = await activeTurn(db, child.parent_id);
    if (parentTurn) await this.fillSlots(child.parent_id, parentTurn.requester_id);
    if (wakeParent) this.deps.wake(child.parent_id);
  }

  private async finishCall(
    parentId: string,
    call: ToolCallRow,
    status: 'done' | 'failed' | 'cancelled',
    result: string,
  ): Promise<void> {
    const output = status === 'done' ? `Sub-agent summary:\n${result}` : result;
    const summary = clip(result, 100);
    if (
      await transitionToolCall(this.deps.db, call.id, ['running'], status, {
        result: output,
        summary,
        finished_at: Date.now(),
      })
    ) {
      this.deps.metrics.toolCalls.inc({ tool: call.name, status });
      this.deps.emit(parentId, { type: 'tool_finished', callId: call.id, name: call.name, status, summary });
    }
  }

  private async failCall(parentId: string, call: ToolCallRow, text: string): Promise<'final'> {
    await this.finishCall(parentId, call, 'failed', text);
    return 'final';
  }

  /** Write the plan file and ask the user to accept, reject or annotate it (once). */
  private async reviewPlan(child: Conversation, call: ToolCallRow, plan: string): Promise<void> {
    const { db, paths } = this.deps;
    const parentId = child.parent_id as string;
    if (await questionForCall(db, call.id)) return;
    const rel = planPath(call.id);
    let saved = rel;
    try {
      await writeAtomic(paths, rel, `${plan}\n`);
    } catch (err) {
      saved = `(not saved: ${errorMessage(err)})`;
    }
    const shown = plan.length > 3000 ? `${plan.slice(0, 3000)}…` : plan;
    const question = `📋 ${child.agent_label ?? 'plan'} — saved to ${saved}\n\n${shown}\n\nAccept, reject, or reply with changes.`;
    const q = await createQuestion(db, {
      conversation_id: parentId,
      tool_call_id: call.id,
      question,
      suggested: ['Accept', 'Reject'],
    });
    this.deps.emit(parentId, {
      type: 'question',
      id: q.id,
      question: q.question,
      suggestedAnswers: ['Accept', 'Reject'],
    });
  }
}
