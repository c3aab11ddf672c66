/**
 * Renders core events into a Telegram chat: streamed reply text, tool status lines, approval and
 * question cards (and their resolution), notifications and errors.
 *
 * Events of one conversation are handled strictly in order on a private chain, and `deliver`
 * returns at once, so the turn engine never waits for Telegram's rate limits. Files sent by
 * tools join the same chain, so a file never overtakes the text written before it.
 */
import type { Logger } from 'pino';
import type { CoreApi } from '../../core/api.js';
import type { CoreEvent } from '../../core/events.js';
import type { Conversation } from '../../store/schema.js';
import {
  approvalCardHtml,
  approvalKeyboard,
  type NameOf,
  noNoteKeyboard,
  questionCardHtml,
  questionKeyboard,
  resolvedApprovalHtml,
  resolvedQuestionHtml,
  trimText,
} from './cards.js';
import { LiveMessage } from './live.js';
import { escapeHtml, markdownToHtmlBlocks } from './markdown.js';
import type { ChatTarget, Outbox } from './outbox.js';
import { packBlocks } from './split.js';
import type { TypingIndicators } from './typing.js';

/** Where a card was rendered; stored with `core.setCardRef` so a new process can edit it. */
export interface CardRef {
  chatId: number;
  messageId: number;
}

/** Parse a stored card ref; null when absent or not ours. */
export function parseCardRef(ref: string | null | undefined): CardRef | null {
  if (!ref) return null;
  try {
    const v = JSON.parse(ref) as Partial<CardRef>;
    return typeof v.chatId === 'number' && typeof v.messageId === 'number' ? { chatId: v.chatId, messageId: v.messageId } : null;
  } catch {
    return null;
  }
}

/** The chat (and topic) of a conversation row. */
export function targetOf(conversation: Pick<Conversation, 'chat_key' | 'thread_key'>): ChatTarget {
  const threadId = conversation.thread_key ? Number(conversation.thread_key) : undefined;
  return { chatId: Number(conversation.chat_key), ...(threadId ? { threadId } : {}) };
}

/** Characters of streamed tool output kept on the status line. */
const TOOL_OUTPUT_TAIL = 800;

interface ToolLine {
  label: string;
  output: string;
  status: 'running' | 'done' | 'failed' | 'cancelled' | 'rejected';
  summary: string;
  live: LiveMessage;
}

interface ConvState {
  target: ChatTarget;
  text: string;
  stream: LiveMessage | null;
  tools: Map<string, ToolLine>;
  chain: Promise<void>;
}

const TOOL_ICON: Record<ToolLine['status'], string> = { running: '🔧', done: '✅', failed: '❌', cancelled: '⏹', rejected: '🚫' };

function toolHtml(t: ToolLine): string {
  let html = `${TOOL_ICON[t.status]} <code>${escapeHtml(t.label)}</code>`;
  if (t.status === 'running') html += '…';
  else if (t.summary.trim()) html += ` — ${escapeHtml(trimText(t.summary, 200))}`;
  if (t.status === 'running' && t.output.trim()) {
    const tail = t.output.length > TOOL_OUTPUT_TAIL ? `…${t.output.slice(-TOOL_OUTPUT_TAIL)}` : t.output;
    html += `\n<pre>${escapeHtml(tail.trimEnd())}</pre>`;
  }
  return html;
}

/** Options of {@link EventRenderer}. */
export interface EventRendererOptions {
  outbox: Outbox;
  typing: TypingIndicators;
  log: Logger;
  /** `telegram.stream_interval_ms` (default 1000). */
  intervalMs: number;
  nameOf: NameOf;
  core: () => CoreApi | null;
}

/** Turns core events into Telegram messages, one ordered chain per conversation. */
export class EventRenderer {
  private readonly convs = new Map<string, ConvState>();

  constructor(private readonly opts: EventRendererOptions) {}

  /** Queue an event for rendering; returns immediately. */
  deliver(conversation: Conversation, event: CoreEvent): void {
    void this.enqueue(conversation, () => this.handle(this.state(conversation), conversation, event));
  }

  /** Run `fn` on the conversation's chain (after everything rendered before it) and return its result. */
  enqueue<T>(conversation: Conversation, fn: () => Promise<T>): Promise<T> {
    const st = this.state(conversation);
    const run = st.chain.then(fn);
    st.chain = run.then(
      () => undefined,
      (err) => this.opts.log.warn({ err, conversationId: conversation.id }, 'telegram render failed'),
    );
    return run;
  }

  /** Wait until every queued event has been rendered. */
  async drain(): Promise<void> {
    for (;;) {
      const chains = [...this.convs.values()].map((s) => s.chain);
      await Promise.all(chains);
      if ([...this.convs.values()].every((s, i) => s.chain === chains[i])) return;
    }
  }

  /** Stop timers without final updates (shutdown). */
  cancelAll(): void {
    for (const st of this.convs.values()) {
      st.stream?.cancel();
      for (const t of st.tools.values()) t.live.cancel();
    }
  }

  private state(conversation: Conversation): ConvState {
    let st = this.convs.get(conversation.id);
    if (!st) {
      st = { target: targetOf(conversation), text: '', stream: null, tools: new Map(), chain: Promise.resolve() };
      this.convs.set(conversation.id, st);
    }
    return st;
  }

  private live(st: ConvState, render: () => string[]): LiveMessage {
    return new LiveMessage({ outbox: this.opts.outbox, target: st.target, log: this.opts.log, intervalMs: this.opts.intervalMs, render });
  }

  private async endStream(st: ConvState): Promise<void> {
    const stream = st.stream;
    st.stream = null;
    if (stream) {
      if (st.text.trim()) await stream.finish();
      else stream.cancel();
    }
    st.text = '';
  }

  private streamFor(st: ConvState): LiveMessage {
    if (!st.stream) {
      const text = () => st.text;
      st.stream = this.live(st, () => packBlocks(markdownToHtmlBlocks(text())));
    }
    return st.stream;
  }

  private async handle(st: ConvState, conversation: Conversation, event: CoreEvent): Promise<void> {
    const { typing, outbox, nameOf } = this.opts;
    const key = conversation.id;
    switch (event.type) {
      case 'turn_started':
        typing.start(key, st.target);
        return;
      case 'delta':
        typing.start(key, st.target);
        st.text += event.text;
        this.streamFor(st).touch();
        return;
      case 'reply': {
        st.text = event.text;
        if (!st.text.trim()) {
          await this.endStream(st);
          return;
        }
        this.streamFor(st);
        await this.endStream(st);
        return;
      }
      case 'tool_started': {
        await this.endStream(st);
        typing.start(key, st.target);
        const line: ToolLine = { label: event.label || event.name, output: '', status: 'running', summary: '', live: null as never };
        line.live = this.live(st, () => [toolHtml(line)]);
        st.tools.set(event.callId, line);
        line.live.touch();
        return;
      }
      case 'tool_output': {
        const line = st.tools.get(event.callId);
        if (!line) return;
        line.output = (line.output + event.text).slice(-4 * TOOL_OUTPUT_TAIL);
        line.live.touch();
        return;
      }
      case 'tool_finished': {
        let line = st.tools.get(event.callId);
        if (!line) {
          // A call resumed after a restart may finish without a started event in this process.
          const fresh: ToolLine = { label: event.name, output: '', status: 'running', summary: '', live: null as never };
          fresh.live = this.live(st, () => [toolHtml(fresh)]);
          line = fresh;
        }
        line.status = event.status;
        line.summary = event.summary;
        st.tools.delete(event.callId);
        await line.live.finish();
        return;
      }
      case 'approval_requested': {
        await this.endStream(st);
        typing.stop(key);
        if (event.replay && event.cardRef) return;
        const html = approvalCardHtml(event.label, event.preview);
        const messageId = await outbox.serial(st.target, () => outbox.sendHtml(st.target, html, approvalKeyboard(event.id, event.alwaysCovers)));
        await this.opts.core()?.setCardRef('approval', event.id, JSON.stringify({ chatId: st.target.chatId, messageId }));
        return;
      }
      case 'approval_resolved': {
        const ref = parseCardRef(event.cardRef) ?? (await this.loadCardRef('approval', event.id));
        if (!ref) return;
        const label = event.label ?? (await this.approvalLabel(event.id));
        const html = resolvedApprovalHtml(label, event.decision, event.scope, nameOf(event.by), event.note);
        const kb = event.decision === 'awaiting_note' ? noNoteKeyboard(event.id) : null;
        const target = { chatId: ref.chatId };
        await outbox.serial(target, () => outbox.editHtml(target, ref.messageId, html, kb));
        return;
      }
      case 'question': {
        await this.endStream(st);
        typing.stop(key);
        if (event.replay && event.cardRef) return;
        const messageId = await outbox.serial(st.target, () =>
          outbox.sendHtml(st.target, questionCardHtml(event.question), questionKeyboard(event.id, event.suggestedAnswers)),
        );
        await this.opts.core()?.setCardRef('question', event.id, JSON.stringify({ chatId: st.target.chatId, messageId }));
        return;
      }
      case 'question_resolved': {
        const ref = parseCardRef(event.cardRef) ?? (await this.loadCardRef('question', event.id));
        if (!ref) return;
        const row = await this.opts.core()?.db.selectFrom('questions').select('question').where('id', '=', event.id).executeTakeFirst();
        const html = resolvedQuestionHtml(row?.question ?? '', event.status, event.answer, nameOf(event.by));
        const target = { chatId: ref.chatId };
        await outbox.serial(target, () => outbox.editHtml(target, ref.messageId, html, null));
        return;
      }
      case 'notification': {
        // A title line marks it as a notification; the body goes through the reply Markdown pipeline.
        const head = event.title ? `🔔 <b>${escapeHtml(event.title)}</b>` : '🔔';
        for (const chunk of packBlocks([head, ...markdownToHtmlBlocks(event.text)])) await outbox.serial(st.target, () => outbox.sendHtml(st.target, chunk));
        return;
      }
      case 'error': {
        await this.endStream(st);
        const html = `⚠️ ${escapeHtml(trimText(event.message, 3000))}`;
        await outbox.serial(st.target, () => outbox.sendHtml(st.target, html));
        return;
      }
      case 'attachment':
        // The file itself went out through sendFile; the event only matters to text channels.
        return;
      case 'turn_done': {
        await this.endStream(st);
        for (const [id, line] of st.tools) {
          st.tools.delete(id);
          if (line.status === 'running') line.status = event.status === 'cancelled' ? 'cancelled' : 'failed';
          await line.live.finish();
        }
        typing.stop(key);
        return;
      }
    }
  }

  private async loadCardRef(kind: 'approval' | 'question', id: string): Promise<CardRef | null> {
    const db = this.opts.core()?.db;
    if (!db) return null;
    const row =
      kind === 'approval'
        ? await db.selectFrom('approvals').select('card_ref').where('id', '=', id).executeTakeFirst()
        : await db.selectFrom('questions').select('card_ref').where('id', '=', id).executeTakeFirst();
    return parseCardRef(row?.card_ref);
  }

  private async approvalLabel(id: string): Promise<string> {
    const row = await this.opts.core()?.db.selectFrom('approvals').select('label').where('id', '=', id).executeTakeFirst();
    return row?.label ?? 'tool call';
  }
}
