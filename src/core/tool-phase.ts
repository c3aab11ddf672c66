/**
 * The tool phase of a round: gate every call of one assistant message, run the allowed ones in
 * parallel (bounded by `tools.parallel`), and once all are final write their results to the log.
 * Waiting for a person is a row (approval, question), never a promise held here.
 */
import { configSecrets, redactSecrets } from '../tools/redact.js';
import { askFromTool } from './tool-questions.js';
import { errorMessage } from '../errors.js';
import {
  approvalForCall,
  createQuestion,
  pendingQuestions,
  closeQuestion,
  questionForCall,
} from '../store/repos/approvals.js';
import { recordAudit } from '../store/repos/audit.js';
import { writeToolResults } from '../store/repos/message-steps.js';
import { toolCallsOfMessage, transitionToolCall } from '../store/repos/turns.js';
import type { Conversation, Message, ToolCallRow, ToolCallStatus, Turn } from '../store/schema.js';
import type { Channel } from '../contract/channel.js';
import type { OutboundFile } from '../contract/chat.js';
import { sendingCopies } from './send-copies.js';
import type { AnyTool, AskInput, ToolContext, ToolResult } from '../tools/types.js';
import { clip } from '../tools/define.js';
import type { EngineDeps } from './deps.js';
import { requestApproval } from './approval-request.js';
import { argumentsHash, GRANT_VERSION, gate, grantArgs, grantKeys, loadRules, type Rule } from './rules.js';
import { prepareArguments } from './tool-registry.js';
import { grantGroups } from '../store/repos/grants.js';
import { QUESTION_TOOL } from './question-tool.js';
import { showQuestion, showTool } from '../delivery/ledger.js';
import { hotCache } from '../store/hot-cache.js';
import { isSubAgentTool, type SubAgents, toolAllowed } from './subagents.js';
import { actsAsAdmin, pathsFor } from './tool-scope.js';

/** Result given to the model is capped so one runaway tool cannot blow the context. */
const MAX_RESULT_CHARS = 100_000;

/** How the phase ended: all results written, waiting for a person, or aborted. */
export type PhaseOutcome = 'continue' | 'wait' | 'aborted';

type Verdict = { kind: 'run'; tool: AnyTool; args: unknown } | { kind: 'wait' } | { kind: 'final' };

/** Text the model sees for a refused call. */
function denialText(note: string | null): string {
  return note
    ? `The user denied this tool call. Their note: ${note}`
    : 'The user denied this tool call. Do not retry it unchanged; ask or try another way.';
}

/** Runs the tool calls of one assistant message. */
/** Tool output in general is redacted of secrets and key shapes, not of `password=` heuristics. */
const KNOWN_ONLY = { assignments: false } as const;

export class ToolPhase {
  constructor(
    private readonly deps: EngineDeps,
    private readonly subagents: SubAgents,
  ) {}

  async run(
    conversation: Conversation,
    channel: Channel,
    turn: Turn,
    message: Pick<Message, 'id'>,
    signal: AbortSignal,
  ): Promise<PhaseOutcome> {
    const { db, config, log } = this.deps;
    let rules: readonly Rule[] | null;
    try {
      rules = await loadRules(db, config, conversation.id, turn.requester_id);
    } catch (err) {
      log.error({ err }, 'approval rules could not be read; refusing tool calls');
      rules = null;
    }
    const calls = await toolCallsOfMessage(db, message.id);
    const runnable: Array<{ call: ToolCallRow; tool: AnyTool; args: unknown }> = [];
    for (const call of calls) {
      const verdict = await this.verdict(conversation, channel, turn, call, rules);
      if (verdict.kind === 'run') runnable.push({ call, tool: verdict.tool, args: verdict.args });
    }
    const exec = (r: (typeof runnable)[number]) =>
      this.execute(conversation, channel, turn, r.call, r.tool, r.args, signal);
    const inOrder = (r: (typeof runnable)[number]) => r.tool.name === QUESTION_TOOL || isSubAgentTool(r.tool.name);
    await this.runBounded(
      runnable.filter((r) => !inOrder(r)),
      exec,
    );
    // Questions go one at a time, in order, so a later one reliably supersedes an earlier one;
    // sub-agents are created in call order, so the first ones get the free slots.
    for (const r of runnable.filter(inOrder)) await exec(r);
    if (signal.aborted) return 'aborted';

    const after = await toolCallsOfMessage(db, message.id);
    if (after.some((c) => c.status === 'pending' || c.status === 'awaiting_approval' || c.status === 'running'))
      return 'wait';
    await this.writeResults(conversation.id, turn.id, message, after);
    return 'continue';
  }

  /** Decide what to do with one call given its stored status. */
  private async verdict(
    conversation: Conversation,
    channel: Channel,
    turn: Turn,
    call: ToolCallRow,
    rules: readonly Rule[] | null,
  ): Promise<Verdict> {
    const { db } = this.deps;
    switch (call.status) {
      case 'done':
      case 'failed':
      case 'cancelled':
      case 'rejected':
        return { kind: 'final' };
      case 'running': {
        if (isSubAgentTool(call.name)) {
          return (await this.subagents.reconcile(conversation, turn, call)) === 'wait'
            ? { kind: 'wait' }
            : { kind: 'final' };
        }
        if (call.name === QUESTION_TOOL) {
          const q = await questionForCall(db, call.id);
          if (q?.status === 'pending') return { kind: 'wait' };
        }
        // Running at a crash: re-gate and re-run from the recorded name and arguments.
        const attempt = call.attempt + 1;
        await transitionToolCall(db, call.id, ['running'], 'pending', { attempt });
        this.deps.log.info({ callId: call.id, tool: call.name }, 'tool call was running at a restart; re-gating');
        return this.gateCall(conversation, channel, turn, { ...call, status: 'pending', attempt }, rules);
      }
      case 'awaiting_approval':
        return this.checkApproval(conversation, channel, turn, call, rules);
      case 'pending':
        return this.gateCall(conversation, channel, turn, call, rules);
    }
  }

  /** Finalise a call that will not run, with the text the model sees. */
  private async finalize(
    conversationId: string,
    call: ToolCallRow,
    status: Exclude<ToolCallStatus, 'pending' | 'awaiting_approval' | 'running'>,
    output: string,
    label?: string,
  ): Promise<Verdict> {
    const summary = clip(output, 100);
    const moved = await this.deps.db.transaction().execute(async (trx) => {
      const ok = await transitionToolCall(trx, call.id, ['pending', 'awaiting_approval'], status, {
        result: output,
        summary,
        finished_at: Date.now(),
      });
      if (ok)
        await showTool(trx, conversationId, call.id, {
          name: call.name,
          label: label ?? call.name,
          state: status === 'failed' ? 'failed' : status,
          summary,
        });
      return ok;
    });
    if (moved) {
      this.deps.metrics.toolCalls.inc({ tool: call.name, status });
      this.deps.emit(conversationId, {
        type: 'tool_started',
        callId: call.id,
        name: call.name,
        label: label ?? call.name,
      });
      this.deps.emit(conversationId, {
        type: 'tool_finished',
        callId: call.id,
        name: call.name,
        status: status === 'done' ? 'done' : status,
        summary: clip(output, 100),
      });
      await this.audit(conversationId, call.id, 'tool_finished', {
        tool: call.name,
        status,
        reason: clip(output, 200),
      });
    }
    return { kind: 'final' };
  }

  private async gateCall(
    conversation: Conversation,
    channel: Channel,
    turn: Turn,
    call: ToolCallRow,
    rules: readonly Rule[] | null,
  ): Promise<Verdict> {
    const { registry, paths, config, db } = this.deps;
    const tool = registry.get(call.name);
    const offered =
      tool &&
      (tool.meta.requires ?? []).every((c) => channel.capabilities.has(c)) &&
      toolAllowed(conversation, tool, config.subagents.max_depth);
    if (!tool || !offered) {
      const names = registry
        .forCapabilities(channel.capabilities)
        .filter((t) => toolAllowed(conversation, t, config.subagents.max_depth))
        .map((t) => t.name)
        .join(', ');
      return this.finalize(conversation.id, call, 'failed', `Unknown tool "${call.name}". Available tools: ${names}.`);
    }
    const group = registry.groupOf(tool);
    if (group !== undefined && !(await hotCache(db).grantedGroups(conversation.id)).has(group)) {
      // A deferred built-in named in the system prompt and called by name is switched on by the
      // call itself (one round saved); a lazy MCP server is switched on only on purpose.
      if (!registry.isDeferredGroup(group)) {
        const text = `Tool "${call.name}" is not active. Call activate_tools {"groups":["${group}"]} first.`;
        return this.finalize(conversation.id, call, 'failed', text);
      }
      await grantGroups(db, conversation.id, [group], turn.requester_id);
    }
    const prepared = prepareArguments(tool, call.args);
    if (!prepared.ok) return this.finalize(conversation.id, call, 'failed', `Error: ${prepared.error}`);
    const args = prepared.value;
    const own = safeLabel(tool, args);
    // A sub-agent's card says whose call it is: `🤖 task: <short prompt> · bash git status`.
    const label = conversation.agent_label
      ? { short: own.short, long: `🤖 ${conversation.agent_label} · ${own.long}` }
      : own;
    if (rules === null) {
      return this.finalize(
        conversation.id,
        call,
        'rejected',
        'Refused: the approval rules could not be read, so no tool may run.',
        label.short,
      );
    }
    const target = safeCall(() => tool.targetPath?.(args));
    const resolved = target ? paths.resolve(target, 'read') : undefined;
    const rel = resolved?.ok ? resolved.rel : target;
    // A call without a path is granted by its exact arguments (a shell command, an MCP input).
    const keys = rel === undefined ? grantKeys(tool, args) : null;
    const decision = gate(rules, tool, rel, keys);
    if (decision.action === 'deny') {
      return this.finalize(conversation.id, call, 'rejected', `Refused by policy (${decision.reason}).`, label.short);
    }
    if (decision.action === 'allow') return { kind: 'run', tool, args };

    // A decision holds only for the arguments its card showed: other arguments are asked anew.
    const hash = argumentsHash(args);
    const existing = await approvalForCall(db, call.id, call.attempt);
    if (existing?.args_sha256 === hash)
      return this.checkApproval(conversation, channel, turn, { ...call, status: 'awaiting_approval' }, rules, existing);
    // The whole arguments, never cut or folded: the card shows what fits and sends the rest as a file.
    await requestApproval(this.deps, {
      conversationId: conversation.id,
      call,
      tool: tool.name,
      label: label.long,
      preview: safeCall(() => tool.preview?.(args)) ?? JSON.stringify(args, null, 2),
      requester: turn.requester_id,
      targetPath: rel ?? null,
      grantArgs: rel === undefined ? grantArgs(tool, args, GRANT_VERSION) : null,
      argsHash: hash,
      timeoutSeconds: channel.approvalTimeoutSeconds ?? config.approvals.timeout_seconds,
      ...(existing ? { previous: existing } : {}),
    });
    return { kind: 'wait' };
  }

  private async checkApproval(
    conversation: Conversation,
    channel: Channel,
    turn: Turn,
    call: ToolCallRow,
    rules: readonly Rule[] | null,
    known?: Awaited<ReturnType<typeof approvalForCall>>,
  ): Promise<Verdict> {
    const approval = known ?? (await approvalForCall(this.deps.db, call.id, call.attempt));
    if (!approval) {
      await transitionToolCall(this.deps.db, call.id, ['awaiting_approval'], 'pending');
      return this.gateCall(conversation, channel, turn, { ...call, status: 'pending' }, rules);
    }
    switch (approval.status) {
      case 'pending':
      case 'awaiting_note':
        return { kind: 'wait' };
      case 'approved': {
        const tool = this.deps.registry.get(call.name);
        const prepared = tool ? prepareArguments(tool, call.args) : null;
        if (!tool || !prepared?.ok)
          return this.finalize(conversation.id, call, 'failed', `Unknown tool "${call.name}".`);
        // Run only what the card showed: arguments that hash otherwise (a row from before the
        // binding, a tool that now reads them differently) go back to the gate and are asked anew.
        if (approval.args_sha256 !== argumentsHash(prepared.value)) {
          this.deps.log.warn(
            { callId: call.id, tool: call.name, approval: approval.id },
            'the arguments to run differ from those approved; asking again',
          );
          if (!(await transitionToolCall(this.deps.db, call.id, ['awaiting_approval'], 'pending')))
            return { kind: 'wait' };
          return this.gateCall(conversation, channel, turn, { ...call, status: 'pending' }, rules);
        }
        return { kind: 'run', tool, args: prepared.value };
      }
      case 'rejected':
        return this.finalize(conversation.id, call, 'rejected', denialText(approval.note), approval.label);
      case 'expired':
        return this.finalize(
          conversation.id,
          call,
          'rejected',
          'The approval request timed out, so the call was not run.',
          approval.label,
        );
      case 'cancelled':
        return this.finalize(conversation.id, call, 'cancelled', 'Cancelled by the user.', approval.label);
    }
  }

  private async runBounded<T>(items: T[], fn: (item: T) => Promise<void>): Promise<void> {
    const limit = Math.max(1, this.deps.config.tools.parallel);
    let next = 0;
    const workers = Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) {
        const item = items[next++] as T;
        await fn(item);
      }
    });
    await Promise.all(workers);
  }

  private async audit(
    conversationId: string,
    callId: string | null,
    kind: string,
    data: Record<string, unknown>,
  ): Promise<void> {
    await recordAudit(this.deps.db, conversationId, callId, kind, data);
  }

  /** Run one call that passed the gate. */
  private async execute(
    conversation: Conversation,
    channel: Channel,
    turn: Turn,
    call: ToolCallRow,
    tool: AnyTool,
    args: unknown,
    signal: AbortSignal,
  ): Promise<void> {
    const { db, config, paths, log, llm } = this.deps;
    const conversationId = conversation.id;
    const started = Date.now();
    const label = safeLabel(tool, args);
    const running = await db.transaction().execute(async (trx) => {
      if (
        !(await transitionToolCall(trx, call.id, ['pending', 'awaiting_approval'], 'running', { started_at: started }))
      )
        return false;
      await showTool(trx, conversationId, call.id, {
        name: tool.name,
        label: label.short,
        state: 'running',
        summary: '',
      });
      return true;
    });
    if (!running) return;
    this.deps.emit(conversationId, { type: 'tool_started', callId: call.id, name: tool.name, label: label.short });
    await this.audit(conversationId, call.id, 'tool_started', {
      tool: tool.name,
      label: label.long,
      attempt: call.attempt,
      args_sha256: argumentsHash(args),
    });

    if (tool.name === QUESTION_TOOL) {
      const q = args as { question: string; suggested_answers?: string[] };
      const question = conversation.agent_label ? `🤖 ${conversation.agent_label} asks: ${q.question}` : q.question;
      await this.ask(conversationId, call, { ...q, question });
      return;
    }
    if (isSubAgentTool(tool.name)) {
      await this.subagents.spawn(conversation, turn, call, args as { prompt: string; tools?: string[] });
      return;
    }
    const secrets = configSecrets(config);
    // This conversation's view of the workspace: other conversations' uploads hidden (not an admin's).
    const scoped = await pathsFor(
      { db, paths, isAdmin: this.deps.isAdmin, isLocal: this.deps.isLocal },
      conversation,
      turn.requester_id,
    );
    // Through the presenter, whichever surface the chat has (none: the tool cannot send files).
    const sender: ((file: OutboundFile) => Promise<void>) | undefined =
      channel.surface || channel.eventSurface ? (file) => this.deps.sendFile(conversation, call.id, file) : undefined;
    const ctx: ToolContext = {
      conversationId,
      callId: call.id,
      requester: turn.requester_id,
      requesterIsAdmin: () => actsAsAdmin(this.deps, turn.requester_id),
      channel: conversation.channel,
      signal,
      db,
      config,
      paths: scoped,
      log: log.child({ conversationId, tool: tool.name }),
      emitOutput: (text) =>
        this.deps.emit(conversationId, {
          type: 'tool_output',
          callId: call.id,
          text: redactSecrets(text, secrets, KNOWN_ONLY),
        }),
      audit: (kind, data) => this.audit(conversationId, call.id, kind, data),
      sendFile: sender ? sendingCopies(db, paths, sender) : undefined,
      complete: (prompt, s) => llm.complete(prompt, s, conversation.model ?? config.llm.model),
      speak: (text, s) => llm.speak(text, s),
      ask: (input, s) =>
        askFromTool(
          { db, emit: this.deps.emit, holder: this.deps.holder, isClosing: this.deps.isClosing },
          { conversationId, callId: call.id },
          labelled(conversation, input),
          s,
        ),
      sample: (request, s) => llm.sample(request, s, request.model ?? conversation.model ?? config.llm.model),
    };
    let result: ToolResult;
    try {
      result = await tool.execute(args, ctx);
    } catch (err) {
      result = { output: `Error: ${tool.name} failed: ${errorMessage(err)}`, status: 'failed' };
    }
    // Whatever the tool (built-in, plugin, MCP): no configured secret reaches the model or a chat.
    result = {
      ...result,
      output: redactSecrets(result.output, secrets, KNOWN_ONLY),
      ...(result.summary === undefined ? {} : { summary: redactSecrets(result.summary, secrets, KNOWN_ONLY) }),
    };
    if (signal.aborted && this.deps.isClosing()) {
      // Shutdown interrupted the tool: leave it `running` so recovery re-gates and re-runs it.
      return;
    }
    const status = signal.aborted ? 'cancelled' : (result.status ?? 'done');
    const output =
      result.output.length > MAX_RESULT_CHARS
        ? `${result.output.slice(0, MAX_RESULT_CHARS)}\n[output truncated at ${MAX_RESULT_CHARS} characters]`
        : result.output;
    const summary = clip(result.summary ?? output.split('\n').find((l) => l.trim()) ?? '', 100);
    const moved = await db.transaction().execute(async (trx) => {
      const ok = await transitionToolCall(trx, call.id, ['running'], status, {
        result: output,
        summary,
        finished_at: Date.now(),
      });
      if (ok)
        await showTool(trx, conversationId, call.id, {
          name: tool.name,
          label: label.short,
          state: status,
          summary,
          output,
        });
      return ok;
    });
    if (!moved) return; // stopped meanwhile: `stop` already recorded the call as cancelled
    this.deps.metrics.toolCalls.inc({ tool: tool.name, status });
    this.deps.emit(conversationId, { type: 'tool_finished', callId: call.id, name: tool.name, status, summary });
    await this.audit(conversationId, call.id, 'tool_finished', {
      tool: tool.name,
      status,
      elapsed_ms: Date.now() - started,
    });
  }

  /** Store a question (superseding older ones) and leave the call waiting for the answer. */
  private async ask(
    conversationId: string,
    call: ToolCallRow,
    args: { question: string; suggested_answers?: string[] },
  ): Promise<void> {
    const { db } = this.deps;
    for (const older of await pendingQuestions(db, conversationId)) {
      // A running tool's question (an MCP server asking) is answered to that tool, never superseded.
      if (older.tool_call_id === call.id || older.waiter) continue;
      const superseded = await db.transaction().execute(async (trx) => {
        if (!(await closeQuestion(trx, older.id, 'superseded', null, null))) return false;
        await transitionToolCall(trx, older.tool_call_id, ['running'], 'done', {
          result: 'This question was superseded by a newer question before the user answered.',
          summary: 'superseded',
          finished_at: Date.now(),
        });
        await showQuestion(trx, older, { state: 'superseded', answer: null, by: null });
        return true;
      });
      if (superseded) {
        this.deps.emit(conversationId, {
          type: 'question_resolved',
          id: older.id,
          status: 'superseded',
          answer: null,
          by: null,
        });
      }
    }
    const existing = await questionForCall(db, call.id);
    if (existing?.status === 'pending') return;
    const suggested = args.suggested_answers ?? [];
    const q = await db.transaction().execute(async (trx) => {
      const created = await createQuestion(trx, {
        conversation_id: conversationId,
        tool_call_id: call.id,
        question: args.question,
        suggested,
      });
      await showQuestion(trx, created);
      return created;
    });
    this.deps.emit(conversationId, { type: 'question', id: q.id, question: q.question, suggestedAnswers: suggested });
  }

  /** Write one tool message per call, in the model's order, so the log stays a valid history. */
  private async writeResults(
    conversationId: string,
    turnId: string,
    message: Pick<Message, 'id'>,
    calls: ToolCallRow[],
  ): Promise<void> {
    await writeToolResults(
      this.deps.db,
      conversationId,
      turnId,
      message.id,
      calls.map((c) => ({ callId: c.id, content: c.result ?? `(${c.status})` })),
    );
  }
}

function safeCall<T>(fn: () => T): T | undefined {
  try {
    return fn();
  } catch {
    return undefined;
  }
}

function safeLabel(tool: AnyTool, args: unknown): { short: string; long: string } {
  return safeCall(() => tool.describe(args)) ?? { short: tool.name, long: tool.name };
}

/** A sub-agent's questions say which agent asks, as its clarification questions do. */
function labelled(conversation: { agent_label: string | null }, input: AskInput): AskInput {
  return conversation.agent_label ? { ...input, question: `🤖 ${conversation.agent_label}: ${input.question}` } : input;
}
