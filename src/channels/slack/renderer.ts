/**
 * Renders one conversation's reply stream into Slack: deltas update a single message at most
 * every `intervalMs`, the finished reply replaces it (split over more messages when long), tool
 * calls become context lines. Every Slack call of a conversation goes through one serial queue,
 * so messages keep their order in the thread and a post still being retried (429) is never
 * followed by a second post of the same text: later flushes wait and become updates.
 */
import type { Logger } from 'pino';
import { markdownToSegments } from './mrkdwn.js';
import { splitForSlack, type SlackMessagePart } from './split.js';
import type { Block, CardMessage } from './blocks.js';
import { outputTail, toolLine } from './blocks.js';

/** A tool's context line and the output it streamed so far. */
interface ToolState {
  ts: string;
  label: string;
  output: string;
  timer: NodeJS.Timeout | null;
  lastAt: number;
}

/** Where a conversation's messages go. */
export interface SlackTarget {
  channel: string;
  /** Thread to reply in; undefined posts at the top level (a DM without threads). */
  threadTs?: string;
}

/** The Web API calls the renderer needs (a WebClient wrapper in production). */
export interface SlackPoster {
  post(target: SlackTarget, message: { text: string; blocks: Block[] }): Promise<string>;
  update(channel: string, ts: string, message: { text: string; blocks: Block[] }): Promise<void>;
  remove(channel: string, ts: string): Promise<void>;
}

/**
 * One streamed assistant message: the Slack messages it occupies (more than one once it outgrows
 * a message) with what each shows, and its text so far.
 */
interface Run {
  messages: Array<{ ts: string; shown: string }>;
  text: string;
  finalText: string | null;
  flushQueued: boolean;
}

const newRun = (): Run => ({ messages: [], text: '', finalText: null, flushQueued: false });

/** Render Markdown into Slack message parts (at least one part, even for empty text). */
export function renderParts(markdown: string): SlackMessagePart[] {
  const parts = splitForSlack(markdownToSegments(markdown));
  if (parts.length) return parts;
  const text = markdown.trim() ? markdown.trim() : '…';
  return [{ text, blocks: [{ type: 'section', text: { type: 'mrkdwn', text: '…' } }] }];
}

/** Serial, throttled renderer for one conversation. */
export class ConversationRenderer {
  private queue: Promise<void> = Promise.resolve();
  private run: Run | null = null;
  private timer: NodeJS.Timeout | null = null;
  private lastFlushAt = 0;
  /** Text of the last finished message, so a `reply` repeating it after a tool start is not posted twice. */
  private lastFinal: string | null = null;
  private readonly tools = new Map<string, ToolState>();

  constructor(
    private readonly target: () => SlackTarget,
    private readonly poster: SlackPoster,
    private readonly intervalMs: number,
    private readonly log: Logger,
  ) {}

  /** Queue a Slack operation after every earlier one; failures are logged, never thrown. */
  enqueue(what: string, op: () => Promise<void>): Promise<void> {
    const next = this.queue.then(op).catch((err: unknown) => {
      this.log.error({ err, what }, 'slack: rendering failed');
    });
    this.queue = next;
    return next;
  }

  /** Resolves once everything queued so far has been sent. */
  idle(): Promise<void> {
    return this.queue;
  }

  /** Streamed text: update the live message now, or when the interval has passed. */
  delta(text: string): void {
    if (!text) return;
    if (!this.run) this.run = newRun();
    this.run.text += text;
    if (this.timer) return;
    const wait = Math.max(0, this.lastFlushAt + this.intervalMs - Date.now());
    this.timer = setTimeout(() => this.flush(), wait);
  }

  private flush(): void {
    this.timer = null;
    const run = this.run;
    if (!run || run.finalText !== null || run.flushQueued) return;
    run.flushQueued = true;
    this.lastFlushAt = Date.now();
    void this.enqueue('stream update', async () => {
      run.flushQueued = false;
      if (run.finalText !== null) return;
      await this.sync(run, renderParts(run.text), false);
    });
  }

  /**
   * Make the run's Slack messages show `parts`: update those whose content changed, post the
   * missing ones; when final, delete messages the text no longer needs. A refused final update
   * is posted anew, so the final text always lands.
   */
  private async sync(run: Run, parts: SlackMessagePart[], final: boolean): Promise<void> {
    const target = this.target();
    for (const [i, part] of parts.entries()) {
      const shown = JSON.stringify(part.blocks);
      const existing = run.messages[i];
      if (!existing) {
        run.messages.push({ ts: await this.poster.post(target, part), shown });
        continue;
      }
      if (existing.shown === shown) continue;
      try {
        await this.poster.update(target.channel, existing.ts, part);
        existing.shown = shown;
      } catch (err) {
        if (!final) throw err;
        this.log.warn({ err }, 'slack: final update failed; posting that part anew');
        run.messages[i] = { ts: await this.poster.post(target, part), shown };
      }
    }
    if (!final) return;
    for (const extra of run.messages.splice(parts.length)) {
      await this.poster.remove(target.channel, extra.ts).catch((err: unknown) => this.log.warn({ err }, 'slack: removing a stale part failed'));
    }
  }

  /** Finish the live message with `text` (the whole reply); long text continues in new messages. */
  private finish(run: Run, text: string): Promise<void> {
    run.finalText = text;
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    if (this.run === run) this.run = null;
    this.lastFinal = text;
    return this.enqueue('final reply', async () => {
      if (!text.trim() && run.messages.length === 0) return;
      await this.sync(run, renderParts(text), true);
    });
  }

  /** A finished assistant message. */
  reply(text: string): Promise<void> {
    if (this.run) return this.finish(this.run, text);
    if (text === this.lastFinal || !text.trim()) return this.queue;
    return this.finish(newRun(), text);
  }

  /** Close the live message as it stands (before a tool line, at the end of a turn). */
  settle(suffix = ''): Promise<void> {
    const run = this.run;
    if (!run) return this.queue;
    return this.finish(run, run.text + suffix);
  }

  /** Post a message (card, notice) after everything queued before it; resolves with its ts. */
  post(message: CardMessage, what = 'post'): Promise<string | null> {
    void this.settle();
    let ts: string | null = null;
    return this.enqueue(what, async () => {
      ts = await this.poster.post(this.target(), message);
    }).then(() => ts);
  }

  /** Update a message in order with everything else. */
  update(channel: string, ts: string, message: CardMessage, what = 'update'): Promise<void> {
    return this.enqueue(what, () => this.poster.update(channel, ts, message));
  }

  /** A tool started: close the live text, then a `🔧 label…` context line. */
  async toolStarted(callId: string, label: string): Promise<void> {
    const ts = await this.post(toolLine(label), 'tool line');
    if (ts) this.tools.set(callId, { ts, label, output: '', timer: null, lastAt: Date.now() });
  }

  /** Streamed tool output: the tool line shows its last line, updated at most once per interval. */
  toolOutput(callId: string, text: string): void {
    const tool = this.tools.get(callId);
    if (!tool || !text) return;
    tool.output = (tool.output + text).slice(-4000);
    if (tool.timer) return;
    const wait = Math.max(0, tool.lastAt + this.intervalMs - Date.now());
    tool.timer = setTimeout(() => {
      tool.timer = null;
      tool.lastAt = Date.now();
      void this.enqueue('tool output', async () => {
        // Finished meanwhile: the final line is queued after this one and wins anyway.
        if (this.tools.get(callId) !== tool) return;
        await this.poster.update(this.target().channel, tool.ts, toolLine(tool.label, undefined, undefined, outputTail(tool.output)));
      });
    }, wait);
  }

  /** A tool finished: its context line shows ✅ / ❌ and the summary. */
  toolFinished(callId: string, name: string, status: string, summary: string): Promise<void> {
    const known = this.tools.get(callId);
    this.tools.delete(callId);
    if (known?.timer) clearTimeout(known.timer);
    if (!known) return this.post(toolLine(name, status, summary), 'tool line').then(() => undefined);
    return this.update(this.target().channel, known.ts, toolLine(known.label, status, summary), 'tool line');
  }

  /** True when no text is streaming and no tool line is open. */
  isIdle(): boolean {
    return this.run === null && this.timer === null && this.tools.size === 0;
  }

  /** Stop timers (the queue drains on its own). */
  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    for (const tool of this.tools.values()) if (tool.timer) clearTimeout(tool.timer);
  }
}
