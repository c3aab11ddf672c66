/**
 * The turn loop. Everything it needs to continue is read from the database on every step, so a
 * turn can suspend (approval, question), survive a restart and resume in any process:
 *
 *   inbox → user messages → model round → assistant message (+ tool calls, `pending`)
 *   → gate each call (allow / require approval / deny) → run the allowed ones in parallel
 *   → once every call is final, write the tool results → next round … → reply → `done`.
 */
import { randomUUID } from 'node:crypto';
import { errorMessage } from '../errors.js';
import { lastMessage, pendingInbox } from '../store/repos/log.js';
import { messageWindows } from '../store/message-window.js';
import { consumeInboxItems, endRound, type StartedTurn, startTurn } from '../store/repos/message-steps.js';
import { activeTurn, finishTurn, getTurn, setTurnStatus } from '../store/repos/turns.js';
import type { Conversation, Message, Turn } from '../store/schema.js';
import type { Channel } from '../contract/channel.js';
import { dropStreamedReply, enqueueError, enqueueNotice, enqueueReply, replyKey } from '../delivery/ledger.js';
import { estimateTokens } from './history.js';
import { Compactor } from './compaction.js';
import { describedImages, refusesImages, Vision, withoutImages } from './vision.js';
import { counterFor } from './tokens.js';
import { LlmError, type ModelToolCall } from './llm.js';
import type { EngineDeps } from './deps.js';
import { ToolPhase } from './tool-phase.js';
import { recordUsage } from '../store/repos/usage.js';
import { dailyLimitRefusal } from './usage.js';
import { ToolOffers } from './tool-offer.js';
import { hotCache } from '../store/hot-cache.js';
import { childInstructions, SubAgents } from './subagents.js';

/** How one pass over a turn ended. */
type Outcome = 'finished' | 'suspended';

/** What the loop needs to know of the newest message of the log. */
type LastMessage = Pick<Message, 'id' | 'role' | 'tool_calls'>;

/** Runs turns, one at a time per conversation (the caller serialises per conversation). */
export class TurnRunner {
  private readonly controllers = new Map<string, AbortController>();
  /** The turn each run under way advances, by conversation. */
  private readonly runningTurns = new Map<string, string>();
  /** Runs aborted because another instance stopped their turn: they announce its end here. */
  private readonly stoppedRuns = new WeakSet<AbortController>();
  /** Turns started on receipt (see {@link startedOnReceipt}), for their conversation's next run. */
  private readonly startedTurns = new Map<string, StartedTurn>();
  private readonly tools: ToolPhase;
  /** The tools (and deferred-groups line) each round offers. */
  private readonly offers: ToolOffers;
  readonly subagents: SubAgents;
  /** Folds old turns into summaries (each round, and `/compact`). */
  readonly compactor: Compactor;
  /** Images to the model (`llm.vision`). */
  readonly vision: Vision;

  constructor(private readonly deps: EngineDeps) {
    this.subagents = new SubAgents(deps);
    this.compactor = new Compactor(deps);
    this.vision = new Vision(deps.config, deps.db, deps.paths);
    this.tools = new ToolPhase(deps, this.subagents);
    this.offers = new ToolOffers(deps.db, deps.config, deps.registry, deps.log);
  }

  /** Abort the model stream and running tools of a conversation's current turn. */
  abort(conversationId: string): void {
    this.controllers.get(conversationId)?.abort();
  }

  /**
   * Another instance stopped this conversation's turn (recorded it cancelled and announced it):
   * abort the run when it is still advancing that turn (a late announcement must not cut the next
   * one short). Once it has stopped, the run says the turn ended, so this instance's chat stops
   * showing it as running.
   */
  async stoppedElsewhere(conversationId: string): Promise<void> {
    const controller = this.controllers.get(conversationId);
    const turnId = this.runningTurns.get(conversationId);
    if (!controller || turnId === undefined) return;
    const turn = await getTurn(this.deps.db, turnId);
    if (turn?.status !== 'cancelled' || this.controllers.get(conversationId) !== controller) return;
    this.stoppedRuns.add(controller);
    controller.abort();
  }

  /**
   * A turn was just started with the message that arrived (no inbox round trip): the
   * conversation's next run advances it without looking for it. Only while no run of the
   * conversation is under way: that run could have found the turn itself, and advanced it past
   * the message this hint names.
   */
  startedOnReceipt(conversationId: string, start: StartedTurn): void {
    this.startedTurns.set(conversationId, start);
  }

  /** Abort every running turn (shutdown after the grace period). */
  abortAll(): void {
    for (const c of this.controllers.values()) c.abort();
  }

  /**
   * Advance a conversation's current (or next) turn as far as it can go without waiting for a
   * person. One turn per call: a message that arrives meanwhile schedules the conversation again, and the
   * core runs it again once this call returns.
   *
   * Returns whether a turn was advanced: false when the conversation is not this process's to run
   * (its channel is not served here, or it is closing) or there was nothing to start, so the
   * caller does not loop on queued messages it cannot take.
   */
  async run(conversationId: string): Promise<boolean> {
    const { db } = this.deps;
    // Taken before anything waits: the hint is for this run alone.
    const startedOnReceipt = this.startedTurns.get(conversationId);
    this.startedTurns.delete(conversationId);
    // What this process holds of rules, memories, conversation rows … is checked once per step
    // against the store's change counters, so writes through other processes are seen here.
    await hotCache(db).refresh();
    const conversation = await this.deps.conversation(conversationId);
    if (!conversation) return false;
    const channel = await this.deps.channelFor(conversation);
    // Conversations of channels not served by this process are left to the process that serves them.
    if (!channel || this.deps.isClosing()) return false;
    if (channel.runsHere && !(await channel.runsHere(conversation))) return false;
    // A new turn starts with the queued messages already in the log (one transaction), or was
    // started so on receipt.
    let start = startedOnReceipt;
    let turn = start?.turn;
    if (!turn) {
      turn = await activeTurn(db, conversationId);
      if (!turn) {
        start = await startTurn(db, conversationId);
        if (!start) return false;
        turn = start.turn;
      }
    }
    const started: LastMessage | undefined = start && { id: start.lastMessageId, role: 'user', tool_calls: null };
    if (start) this.deps.emit(conversationId, { type: 'turn_started', turnId: turn.id });
    const controller = new AbortController();
    this.controllers.set(conversationId, controller);
    this.runningTurns.set(conversationId, turn.id);
    try {
      await this.advance(conversation, channel, turn, controller.signal, started);
    } finally {
      this.controllers.delete(conversationId);
      this.runningTurns.delete(conversationId);
      // Counted where it was stopped; announced here too, where the run was.
      if (this.stoppedRuns.has(controller)) this.deps.emit(conversationId, { type: 'turn_done', status: 'cancelled' });
    }
    return true;
  }

  /**
   * End the turn. A failed turn's `error` is shown in the chat: the error row is written in the
   * same transaction as the turn's end, so it is shown exactly when the turn has failed.
   */
  private async finish(turn: Turn, status: 'done' | 'failed', error: string | null = null): Promise<Outcome> {
    const ended = await this.deps.db.transaction().execute(async (trx) => {
      if (!(await finishTurn(trx, turn.id, status, error))) return false;
      if (status === 'failed' && error) await enqueueError(trx, turn.conversation_id, error, `error:${turn.id}`);
      return true;
    });
    if (ended) {
      if (status === 'failed' && error) this.deps.emit(turn.conversation_id, { type: 'error', message: error });
      this.finished(turn, status);
    }
    // A sub-agent's end finishes its parent's call (also after a crash right here: see reconcile).
    await this.subagents.childEnded(turn.conversation_id);
    return 'finished';
  }

  /** Count and announce a turn that has just ended. */
  private finished(turn: Turn, status: 'done' | 'failed'): void {
    this.deps.metrics.turns.inc({ status });
    this.deps.emit(turn.conversation_id, { type: 'turn_done', status });
  }

  /**
   * Move the turn forward until it finishes or must wait. `started` is the newest message when the
   * turn has just been started with the queued messages (no inbox to read again this round).
   */
  private async advance(
    conversation: Conversation,
    channel: Channel,
    initial: Turn,
    signal: AbortSignal,
    started?: LastMessage,
  ): Promise<Outcome> {
    const { db, config } = this.deps;
    const conversationId = conversation.id;
    // The caller just read the turn; later rounds re-read it, since `stop` may end it any time.
    let fresh: Turn | undefined = initial;
    // The newest message, when this loop just wrote it (saves reading it back).
    let written: LastMessage | undefined = started;
    let justConsumed = started !== undefined;
    for (let step = 0; ; step++) {
      if (signal.aborted || this.deps.isClosing()) return 'suspended';
      // The first step runs on the check `run` just made; later ones (after tools ran, which may
      // have written rules, memories or the scratchpad) check again.
      if (step > 0) await hotCache(db).refresh();
      const turn = fresh ?? (await getTurn(db, initial.id));
      fresh = undefined;
      if (!turn || (turn.status !== 'running' && turn.status !== 'waiting')) return 'finished';

      const last: LastMessage | undefined = written ?? (await lastMessage(db, conversationId));
      written = undefined;
      if (last?.role === 'assistant' && last.tool_calls) {
        const phase = await this.tools.run(conversation, channel, turn, last, signal);
        if (phase === 'wait') {
          await setTurnStatus(db, turn.id, 'waiting');
          return 'suspended';
        }
        if (phase === 'aborted') return 'suspended';
        continue;
      }

      // Round boundary: messages that arrived meanwhile join the conversation now.
      const consumed = justConsumed ? 1 : await this.consumeInbox(conversationId, turn.id);
      justConsumed = false;
      if (consumed === 0 && last?.role === 'assistant') return this.finish(turn, 'done');
      if (consumed === 0 && !last) return this.finish(turn, 'done');

      if (turn.rounds >= config.llm.max_rounds) {
        const message = `stopped after ${turn.rounds} model rounds (llm.max_rounds); send a message to continue`;
        return this.finish(turn, 'failed', message);
      }
      if (turn.rounds === 0) {
        const refusal = await dailyLimitRefusal(
          db,
          config,
          turn.requester_id,
          await this.deps.isAdmin(turn.requester_id),
        );
        if (refusal) return this.finish(turn, 'failed', refusal);
      }
      if (turn.status === 'waiting') await setTurnStatus(db, turn.id, 'running');
      const round = await this.modelRound(conversation, channel, turn, signal);
      if (typeof round === 'string') return round;
      written = round;
    }
  }

  /** Move queued inbox items into the log as user messages. */
  private async consumeInbox(conversationId: string, turnId: string): Promise<number> {
    const { db } = this.deps;
    const items = await pendingInbox(db, conversationId);
    if (items.length === 0) return 0;
    await db.transaction().execute((trx) => consumeInboxItems(trx, conversationId, turnId, items));
    return items.length;
  }

  /**
   * The system prompt. Nothing in it changes from one request to the next unless what it shows
   * changed (a memory saved, the scratchpad written): no clock time, no per-request ordering, so
   * providers' prompt caches hit.
   */
  private async systemPrompt(conversation: Conversation, requester: string, toolLine: string | null): Promise<string> {
    const { config, db, promptSections, log } = this.deps;
    const parts = [config.llm.system_prompt, `Current date: ${new Date().toISOString().slice(0, 10)}.`];
    if (toolLine) parts.push(toolLine);
    const child = childInstructions(conversation);
    if (child) parts.push(child);
    for (const section of promptSections) {
      try {
        const text = await section({ db, conversationId: conversation.id, requester, config });
        if (text) parts.push(text);
      } catch (err) {
        log.warn({ err }, 'a system prompt section failed; continuing without it');
      }
    }
    return parts.join('\n\n');
  }

  /** A line for the chat, once per key and conversation (an image not sent, a model without vision). */
  private async tellOnce(conversationId: string, key: string, text: string): Promise<void> {
    if (
      await enqueueNotice(this.deps.db, conversationId, `${key}:${conversationId}`, {
        type: 'notice',
        level: 'error',
        text,
      })
    ) {
      this.deps.emit(conversationId, { type: 'error', message: text });
    }
  }

  /** One streamed model round; stores the assistant message and its tool calls. */
  private async modelRound(
    conversation: Conversation,
    channel: Channel,
    turn: Turn,
    signal: AbortSignal,
  ): Promise<LastMessage | Outcome> {
    const { db, config, llm, metrics } = this.deps;
    const conversationId = conversation.id;
    const [log, { tools, system }] = await Promise.all([
      // Twice the budget by the ≈ 4 characters estimate: a tokenizer counting fewer tokens still finds
      // the window over budget when the conversation is, so old turns are summarised, not lost.
      messageWindows(db).recent(
        conversationId,
        config.llm.context_tokens * 2,
        (m) => estimateTokens(m.content) + estimateTokens(m.tool_calls),
      ),
      this.offers.offer(conversation, channel, turn.requester_id).then(async (offer) => ({
        tools: offer.tools,
        system: await this.systemPrompt(conversation, turn.requester_id, offer.line),
      })),
    ]);
    const model = conversation.model ?? config.llm.model;
    const count = await counterFor(config, model);
    const target = { conversationId, requester: turn.requester_id, model, currentTurnId: turn.id };
    let messages = await this.compactor.history(target, log, system, count, signal);
    if (signal.aborted) return 'suspended';
    let withImages = false;
    const visionOn = await this.vision.enabledFor(model);
    // `llm.vision_model` describes images in text for a model that cannot see them.
    const describer = config.llm.vision_model && config.llm.vision !== 'off' ? config.llm.vision_model : undefined;
    const describe = (msgs: typeof messages) =>
      describer
        ? describedImages(msgs, (url) => this.vision.described(url, (u) => llm.describeImage(describer, u, signal)))
        : Promise.resolve(withoutImages(msgs));
    if (visionOn || describer) {
      const decorated = await this.vision.decorate(messages);
      messages = decorated.messages;
      withImages = decorated.withImages;
      for (const f of decorated.failed)
        await this.tellOnce(conversationId, `image:${f.file}`, `${f.file} was not sent to the model: ${f.reason}.`);
      if (!visionOn && withImages) {
        messages = await describe(messages);
        withImages = false;
      }
    }
    const stopTimer = metrics.modelLatency.startTimer();
    // The round's reply is one delivery: a crash mid-stream re-runs this round under the same key,
    // so the restarted answer reuses the messages already shown instead of leaving a fragment.
    const stream = replyKey(turn.id, turn.rounds);
    let result: Awaited<ReturnType<typeof llm.stream>>;
    this.deps.latency.mark(conversationId, 'model_request');
    const ask = (msgs: typeof messages) =>
      llm.stream({
        model,
        messages: msgs,
        tools,
        signal,
        onDelta: (text) => {
          this.deps.latency.mark(conversationId, 'model_first_byte');
          this.deps.emit(conversationId, { type: 'delta', text, stream, turnId: turn.id });
        },
      });
    try {
      try {
        result = await ask(messages);
      } catch (err) {
        // `auto`: an endpoint refusing image content is asked again without it, once per model.
        if (!(withImages && config.llm.vision === 'auto' && err instanceof LlmError && refusesImages(err.message)))
          throw err;
        await this.vision.markRefused(model);
        const how = describer ? `descriptions of them by ${describer}` : 'the text and the file names only';
        await this.tellOnce(
          conversationId,
          `vision-refused:${model}`,
          `This model (${model}) cannot see images; it gets ${how}.`,
        );
        result = await ask(await describe(messages));
      }
    } catch (err) {
      stopTimer();
      metrics.modelRounds.inc({ outcome: 'error' });
      const message = err instanceof LlmError ? err.message : `model call failed: ${errorMessage(err)}`;
      this.deps.log.warn({ code: (err as LlmError).code, conversationId }, 'model round failed');
      return this.finish(turn, 'failed', message);
    }
    stopTimer();
    if (result.aborted) {
      metrics.modelRounds.inc({ outcome: 'aborted' });
      return 'suspended';
    }
    metrics.modelRounds.inc({ outcome: 'ok' });
    metrics.tokens.inc({ kind: 'prompt', model }, result.usage.prompt);
    metrics.tokens.inc({ kind: 'completion', model }, result.usage.completion);

    // Some servers repeat ids (`call_0` in every response): the store keys calls by its own id.
    // The model's id goes back on the wire as given (providers validate their own format); only a
    // missing id, or one repeated within this response, is replaced by ours.
    const seen = new Set<string>();
    const calls: ModelToolCall[] = result.toolCalls.map((c) => {
      const id = `call_${randomUUID().replace(/-/g, '').slice(0, 24)}`;
      const wireId = c.id && !seen.has(c.id) ? c.id : id;
      seen.add(wireId);
      return { id, wireId, name: c.name, arguments: c.arguments };
    });
    const text = result.content;
    // An empty final message would be rejected by Telegram and Slack; say what happened instead.
    const empty = !calls.length && !text.trim();
    // The message, its tool calls, the usage, what the chat must show of it and (for a final
    // answer with nothing queued) the turn's end: one transaction.
    const toolCalls = calls.length ? JSON.stringify(calls) : null;
    const stored = await endRound(db, {
      turnId: turn.id,
      conversationId,
      content: text || null,
      toolCalls,
      calls,
      usage: result.usage,
      finishIfIdle: true,
      alsoWrite: async (trx) => {
        await recordUsage(trx, {
          conversation_id: conversationId,
          turn_id: turn.id,
          requester_id: turn.requester_id,
          model,
          kind: 'turn',
          prompt_tokens: result.usage.prompt,
          completion_tokens: result.usage.completion,
        });
        // A channel without a surface shows the reply as the event below: its row is settled now.
        if (text.trim()) await enqueueReply(trx, conversationId, stream, turn.id, text, !channel.surface);
        else await dropStreamedReply(trx, stream);
        if (empty) await enqueueError(trx, conversationId, 'the model returned an empty reply', `error:${stream}`);
      },
    });
    if (!stored.stored) return 'finished';
    if (text.trim()) this.deps.emit(conversationId, { type: 'reply', text });
    else if (empty) this.deps.emit(conversationId, { type: 'error', message: 'the model returned an empty reply' });
    if (stored.finished) {
      this.finished(turn, 'done');
      // A sub-agent's end finishes its parent's call, as in `finish`.
      await this.subagents.childEnded(turn.conversation_id);
      return 'finished';
    }
    return { id: stored.messageId, role: 'assistant', tool_calls: toolCalls };
  }
}
