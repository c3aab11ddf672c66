/**
 * `switchboard chat`: a terminal chat with the full core. Node's readline gives a prompt, line
 * editing and history (arrow keys edit the line; they never reach the model). Replies stream to
 * the terminal; approvals are prompts (y = once, s = this session, a = always, n = deny, then an
 * optional note; Enter = no note); questions list their suggested answers. Slash commands work
 * at every prompt, approvals included.
 *
 * Ctrl-C cancels the running turn (as `/stop`: the stream, its tools, its open approvals); at an
 * idle prompt it leaves (exit 0). A turn left unfinished by the previous session (killed, or the
 * machine went down) resumes when the session opens, and the session says so.
 */
import { createInterface, type Interface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import { visibleText, CONSOLE_STOPS_ALL, HELP_HINT, codeSpans } from '../../kit/index.js';
import type {
  ChannelCore,
  CoreEvent,
  Conversation,
  Channel,
  ChannelCapability,
  EventSurface,
  OutboundFile,
} from '../../kit/index.js';
import { eventToLine, type PrintedLine, refusalText, submitRefusal } from './protocol.js';
import { LOCAL_USER } from './jsonl.js';
import { consoleHelp, runCommand } from './commands.js';
import { MarkdownStream, terminalMarkdown, terminalSpans } from './markdown.js';

const PRINCIPAL = `console:${LOCAL_USER}`;

/** Options of {@link ConsoleChannel}. */
export interface ConsoleOptions {
  conversation: string;
  input: Readable;
  output: Writable;
  /** Line editing, history and a prompt; default: whether `output` is a TTY. */
  terminal?: boolean;
  /** Called on `/quit` or end of input; the caller waits for running turns, then exits. */
  onEnd?: () => void;
  /**
   * What else leaving stops, when this chat runs inside `switchboard start` ("the web chat"): the
   * process ends with it, and the chat says so when it opens, in /help and when it leaves.
   */
  alsoStops?: string;
  /** ANSI styles for Markdown; default: on a terminal unless `NO_COLOR` is set. */
  color?: boolean;
}

/** What the next typed line answers, if not a command. */
export type Prompt =
  | { kind: 'approval'; id: string }
  | { kind: 'note'; id: string }
  | { kind: 'question'; id: string; answers: string[] };

/** The interactive terminal channel: its own event surface (the presenter hands it every event to print). */
export class ConsoleChannel implements Channel, EventSurface {
  readonly name = 'console';
  readonly capabilities: ReadonlySet<ChannelCapability> = new Set(['attachments']);
  readonly eventSurface: EventSurface = this;
  private core: ChannelCore | null = null;
  private rl: Interface | null = null;
  /** Open approvals and questions, oldest first; the first one is answered by the next line. */
  readonly prompts: Prompt[] = [];
  private quitting = false;
  /** The reply streaming in, printed a block at a time. */
  private readonly reply: MarkdownStream;
  /** A progress line ("writing… 12 words") stands where the prompt was. */
  private progress = false;
  /** Set by {@link stop}: the core is shutting down, input closing is not a /quit. */
  private stopped = false;
  private readonly terminal: boolean;
  private readonly color: boolean;
  /** The last line of /help. */
  readonly helpHint: string;

  constructor(private readonly options: ConsoleOptions) {
    this.terminal = options.terminal ?? Boolean((options.output as { isTTY?: boolean }).isTTY);
    this.color = options.color ?? (this.terminal && !process.env.NO_COLOR);
    this.reply = new MarkdownStream(this.color);
    this.helpHint = options.alsoStops
      ? `${HELP_HINT.any} ${CONSOLE_STOPS_ALL.hint(options.alsoStops)}`
      : HELP_HINT.console;
  }

  /** Print a line without tearing the line being typed: clear it, print, redraw the prompt. */
  printLine(text: string): void {
    const out = this.options.output;
    this.progress = false;
    if (this.terminal && this.rl) out.write('\r\x1b[K');
    out.write(`${text}\n`);
    if (this.terminal && this.rl && !this.quitting) this.rl.prompt(true);
  }

  /** Print Markdown (a command's answer, a notification) as the terminal shows it. */
  printMarkdown(markdown: string): void {
    this.printLine(terminalMarkdown(markdown, this.color));
  }

  /** Print what is left of a streamed reply (`final`: the whole reply, when the model finished it). */
  private flushReply(final?: string): void {
    const rest = this.reply.end(final);
    if (rest !== null) this.printLine(rest);
    else if (this.progress && this.rl) {
      // Nothing left to print: the progress line gives its place back to the prompt.
      this.progress = false;
      this.options.output.write('\r\x1b[K');
      if (!this.quitting) this.rl.prompt(true);
    }
  }

  /** The conversation this session is on. */
  ref() {
    return { channel: this.name, chatKey: this.options.conversation };
  }

  /** Only the conversation this session was opened on: others wait until someone opens them. */
  serves(conversation: Conversation): boolean {
    return conversation.chat_key === this.options.conversation && conversation.thread_key === '';
  }

  async start(core: ChannelCore): Promise<void> {
    this.core = core;
    const rl = createInterface({
      input: this.options.input,
      output: this.terminal ? this.options.output : undefined,
      terminal: this.terminal,
      historySize: 500,
      removeHistoryDuplicates: true,
      prompt: '› ',
    });
    this.rl = rl;
    const stops = this.options.alsoStops ? ` ${CONSOLE_STOPS_ALL.hint(this.options.alsoStops)}` : '';
    this.printLine(`switchboard chat — conversation "${this.options.conversation}". ${consoleHelp()}${stops}`);
    // Lines are handled in order, so an answer typed right after a prompt sees that prompt.
    let pending: Promise<void> = Promise.resolve();
    rl.on('line', (line) => {
      pending = pending.then(() => this.handle(line.trim())).catch((err) => this.printLine(`error: ${String(err)}`));
    });
    rl.on('close', () => {
      if (!this.stopped) void pending.then(() => this.quit());
    });
    // Ctrl-C (a terminal in raw mode delivers it to readline, not as a signal).
    rl.on('SIGINT', () => {
      pending = pending.then(() => this.interrupt()).catch((err) => this.printLine(`error: ${String(err)}`));
    });
    // Read before the core's recovery resumes it: a turn still open now is the last session's.
    const before = await core.chats.status(this.ref());
    if (before.turn === 'running')
      this.printLine('(resuming the reply the last session left unfinished — /stop or Ctrl-C cancels it)');
    if (this.terminal) rl.prompt();
  }

  /** Ctrl-C: cancel what runs (as `/stop`), or leave when nothing does. */
  async interrupt(): Promise<void> {
    const core = this.core;
    if (!core) return;
    const s = await core.chats.status(this.ref());
    if (s.turn !== 'idle' || s.queued > 0) {
      // "(stopped)" comes with the turn's end; the prompts it cancelled go with their resolutions.
      if (!(await core.chats.stop(this.ref(), PRINCIPAL))) this.printLine('(nothing to stop)');
      return;
    }
    this.quitting = true;
    this.printLine(this.options.alsoStops ? CONSOLE_STOPS_ALL.leaving(this.options.alsoStops) : '(bye)');
    this.options.onEnd?.();
  }

  /**
   * Leave: wait for a running turn (saying so); a second `/quit` stops it first. Approvals and
   * questions stay pending in the database for the next session.
   */
  async quit(): Promise<void> {
    const core = this.core;
    if (!core) return;
    if (this.quitting) {
      await core.chats.stop(this.ref(), PRINCIPAL);
      this.printLine('(stopped; leaving)');
      this.options.onEnd?.();
      return;
    }
    this.quitting = true;
    const s = await core.chats.status(this.ref());
    if (s.turn === 'running')
      this.printLine('(waiting for the running turn and its tools to finish — /quit again to stop them and leave)');
    if (this.options.alsoStops) this.printLine(CONSOLE_STOPS_ALL.leaving(this.options.alsoStops));
    this.options.onEnd?.();
  }

  private async handle(line: string): Promise<void> {
    const core = this.core;
    if (!core) return;
    const prompt = this.prompts[0];
    // Commands first: they work at every prompt, including an open approval or note.
    if (line.startsWith('/') && (await runCommand(this, core, line, PRINCIPAL))) return;
    // Decided as a tap is, by the same rules; only cards shown in this conversation.
    const tap = { within: this.ref() };
    if (prompt?.kind === 'note') {
      // Enter (an empty line) means no note.
      this.prompts.shift();
      const denial = line
        ? ({ kind: 'denial', id: prompt.id, note: line } as const)
        : ({ kind: 'approval', id: prompt.id, choice: 'no_note' } as const);
      const r = await core.act(denial, PRINCIPAL, tap);
      if (!r.ok) this.printLine(`(could not deny: ${refusalText(r.reason ?? r.text)})`);
      return;
    }
    if (!line) return;
    if (prompt?.kind === 'approval') {
      const choice = line.toLowerCase();
      const scope = choice === 'y' ? 'once' : choice === 's' ? 'session' : choice === 'a' ? 'always' : null;
      if (scope) {
        this.prompts.shift();
        const r = await core.act({ kind: 'approval', id: prompt.id, choice: scope }, PRINCIPAL, tap);
        if (!r.ok) this.printLine(`(could not approve: ${refusalText(r.reason ?? r.text)})`);
        return;
      }
      if (choice === 'n') {
        this.prompts[0] = { kind: 'note', id: prompt.id };
        this.printLine('Note for the model (Enter for none):');
        return;
      }
      this.printLine('Please answer y (once), s (this session), a (always) or n (deny) — or a /command.');
      return;
    }
    let text = line;
    if (prompt?.kind === 'question') {
      const n = Number(line);
      if (Number.isInteger(n) && n >= 1 && n <= prompt.answers.length) text = prompt.answers[n - 1] as string;
      this.prompts.shift();
      if ((await core.act({ kind: 'answer', id: prompt.id, text }, PRINCIPAL, tap)).ok) return;
    }
    // Typed lines are never delivered twice: no inbound key to record.
    const r = await core.receive({ ...this.ref(), userId: LOCAL_USER, userName: 'local', text, direct: true });
    const refused = submitRefusal(r);
    if (refused) this.printLine(`(${refused})`);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.quitting = true;
    this.rl?.close();
  }

  /** Print an event: the JSONL printer's line for it (the same stream), written as text. */
  async show(_conversation: Conversation, event: CoreEvent): Promise<void> {
    const line = eventToLine(event);
    if (line) this.showLine(line);
  }

  /** Write one printed line as text; approvals and questions also become the next line's prompt. */
  private showLine(line: PrintedLine) {
    if (line.type === 'delta') return this.showDelta(line.text);
    // Whatever comes next ends the reply streaming in: the rest of it is printed first.
    this.flushReply(line.type === 'reply' ? line.text : undefined);
    switch (line.type) {
      case 'reply':
        return;
      case 'tool_started':
        return this.printLine(`🔧 ${line.label}…`);
      case 'tool_output':
        return this.printLine(`   │ ${line.text.replace(/\n$/, '').split('\n').join('\n   │ ')}`);
      case 'tool_finished':
        // A stop says "(stopped)" once; the calls it cancelled need no line each.
        if (line.status === 'cancelled') return;
        return this.printLine(`${line.status === 'done' ? '✅' : '❌'} ${line.name}: ${line.summary || line.status}`);
      case 'approval_requested': {
        this.prompts.push({ kind: 'approval', id: line.id });
        // `always` is the tool's name alone when the request says nothing of what "always" covers.
        const covers = terminalSpans(codeSpans(visibleText(line.always)), this.color);
        const always = line.always !== line.tool ? ` (${covers}; your turns, every conversation)` : '';
        // Whole, with escapes and direction characters marked: nothing in it acts on the terminal.
        return this.printLine(
          `\n⚠ Approve ${visibleText(line.label)}?\n${visibleText(line.preview)}\n[y] once  [s] this session  [a] always${always}  [n] deny`,
        );
      }
      case 'approval_resolved': {
        const i = this.prompts.findIndex((p) => p.id === line.id);
        if (i >= 0 && line.decision !== 'awaiting_note') this.prompts.splice(i, 1);
        if (line.decision === 'cancelled') return;
        return this.printLine(
          `(approval ${line.decision}${line.scope && line.scope !== 'once' ? ` ${line.scope}` : ''}${line.by ? ` by ${line.by}` : ''})`,
        );
      }
      case 'question': {
        this.prompts.push({ kind: 'question', id: line.id, answers: line.suggested_answers });
        const options = line.suggested_answers.map((a, i) => `  ${i + 1}. ${a}`).join('\n');
        return this.printLine(`❓ ${terminalMarkdown(line.question, this.color)}${options ? `\n${options}` : ''}`);
      }
      case 'question_resolved': {
        const i = this.prompts.findIndex((p) => p.id === line.id);
        if (i >= 0) this.prompts.splice(i, 1);
        if (line.status === 'superseded') this.printLine('(question superseded)');
        return;
      }
      case 'notification':
        return this.printLine(
          `🔔 [${line.source}]${line.title ? ` ${line.title}:` : ''} ${terminalMarkdown(line.text, this.color)}`,
        );
      case 'attachment':
        return this.printLine(`📎 ${line.path}${line.caption ? ` — ${line.caption}` : ''}`);
      case 'error':
        return this.printLine(`error: ${terminalSpans(codeSpans(line.message), this.color)}`);
      case 'turn_done':
        if (line.status === 'failed') this.printLine('(turn failed)');
        if (line.status === 'cancelled') this.printLine('(stopped)');
        return;
    }
  }

  /** A piece of the streamed reply: complete blocks are printed; meanwhile a terminal shows progress. */
  private showDelta(text: string): void {
    const done = this.reply.push(text);
    if (done !== null) this.printLine(done);
    if (this.terminal && this.rl && this.reply.words > 0) {
      // One short line in place of the prompt (cleared by the next printed line): the reply is coming.
      this.options.output.write(`\r\x1b[K… writing (${this.reply.words} words)`);
      this.progress = true;
    }
  }

  async sendFile(_conversation: Conversation, file: OutboundFile): Promise<void> {
    this.showLine({ type: 'attachment', path: file.path, caption: file.caption });
  }
}
