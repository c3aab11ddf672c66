/**
 * `switchboard chat`: a terminal chat with the full core. Replies stream to the terminal;
 * approvals are prompts (y = once, s = this session, a = always, n = deny, then an optional
 * note); questions list their suggested answers (type a number or any text).
 */
import { createInterface, type Interface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import type { CoreApi } from '../../core/api.js';
import type { CoreEvent } from '../../core/events.js';
import type { Conversation } from '../../store/schema.js';
import type { ChannelCapability, OutboundFile } from '../../tools/types.js';
import type { Channel } from '../channel.js';
import { refusalText } from '../jsonl/protocol.js';
import { LOCAL_USER } from '../jsonl/index.js';

const PRINCIPAL = `console:${LOCAL_USER}`;

/** Options of {@link ConsoleChannel}. */
export interface ConsoleOptions {
  conversation: string;
  input: Readable;
  output: Writable;
  /** Called on `/quit` or end of input. */
  onEnd?: () => void;
}

type Prompt = { kind: 'approval'; id: string } | { kind: 'note'; id: string } | { kind: 'question'; id: string; answers: string[] };

const HELP = 'Commands: /stop (cancel the turn), /new (fresh conversation), /status, /quit. Anything else goes to the model.';

/** The interactive terminal channel. */
export class ConsoleChannel implements Channel {
  readonly name = 'console';
  readonly capabilities: ReadonlySet<ChannelCapability> = new Set(['attachments']);
  private core: CoreApi | null = null;
  private rl: Interface | null = null;
  private readonly prompts: Prompt[] = [];
  private midLine = false;

  constructor(private readonly options: ConsoleOptions) {}

  private print(text: string): void {
    if (this.midLine) this.options.output.write('\n');
    this.midLine = false;
    this.options.output.write(`${text}\n`);
  }

  private ref() {
    return { channel: this.name, chatKey: this.options.conversation };
  }

  async start(core: CoreApi): Promise<void> {
    this.core = core;
    const rl = createInterface({ input: this.options.input, output: this.options.output, terminal: false });
    this.rl = rl;
    this.print(`switchboard chat — conversation "${this.options.conversation}". ${HELP}`);
    rl.on('line', (line) => {
      this.handle(line.trim()).catch((err) => this.print(`error: ${String(err)}`));
    });
    rl.on('close', () => this.options.onEnd?.());
  }

  private async handle(line: string): Promise<void> {
    const core = this.core;
    if (!core || !line) return;
    const prompt = this.prompts[0];
    if (prompt?.kind === 'approval') {
      const choice = line.toLowerCase()[0];
      const scope = choice === 'y' ? 'once' : choice === 's' ? 'session' : choice === 'a' ? 'always' : null;
      if (scope) {
        this.prompts.shift();
        const r = await core.decideApproval({ id: prompt.id, decision: 'approve', scope, by: PRINCIPAL });
        if (!r.ok) this.print(`(could not approve: ${refusalText(r.reason)})`);
        return;
      }
      if (choice === 'n') {
        this.prompts[0] = { kind: 'note', id: prompt.id };
        this.print('Note for the model (press enter for none):');
        return;
      }
      this.print('Please answer y (once), s (this session), a (always) or n (deny).');
      return;
    }
    if (prompt?.kind === 'note') {
      this.prompts.shift();
      const r = await core.decideApproval({ id: prompt.id, decision: 'deny', note: line === '-' ? null : line, by: PRINCIPAL });
      if (!r.ok) this.print(`(could not deny: ${refusalText(r.reason)})`);
      return;
    }
    if (line === '/quit' || line === '/exit') {
      this.rl?.close();
      return;
    }
    if (line === '/help') return this.print(HELP);
    if (line === '/stop') {
      const stopped = await core.stop(this.ref(), PRINCIPAL);
      this.prompts.length = 0;
      return this.print(stopped ? '(stopped)' : '(nothing to stop)');
    }
    if (line === '/new') {
      await core.newConversation(this.ref(), PRINCIPAL);
      this.prompts.length = 0;
      return this.print('(new conversation)');
    }
    if (line === '/status') {
      const s = await core.status(this.ref());
      return this.print(`model ${s.model} · turn ${s.turn} · approvals ${s.pendingApprovals} · questions ${s.pendingQuestions} · queued ${s.queued}`);
    }
    let text = line;
    if (prompt?.kind === 'question') {
      const n = Number(line);
      if (Number.isInteger(n) && n >= 1 && n <= prompt.answers.length) text = prompt.answers[n - 1] as string;
      this.prompts.shift();
      const r = await core.answerQuestion({ id: prompt.id, text, by: PRINCIPAL });
      if (r.ok) return;
    }
    await core.submit({ ...this.ref(), userId: LOCAL_USER, userName: 'local', text });
  }

  async stop(): Promise<void> {
    this.rl?.close();
  }

  async deliver(_conversation: Conversation, event: CoreEvent): Promise<void> {
    switch (event.type) {
      case 'delta':
        this.options.output.write(event.text);
        this.midLine = true;
        return;
      case 'reply':
        if (this.midLine) this.print('');
        else if (event.text) this.print(event.text);
        return;
      case 'tool_started':
        return this.print(`🔧 ${event.label}…`);
      case 'tool_output':
        return this.print(`   │ ${event.text.replace(/\n$/, '').split('\n').join('\n   │ ')}`);
      case 'tool_finished':
        return this.print(`${event.status === 'done' ? '✅' : '❌'} ${event.name}: ${event.summary || event.status}`);
      case 'approval_requested':
        this.prompts.push({ kind: 'approval', id: event.id });
        return this.print(`\n⚠ Approve ${event.label}?\n${event.preview}\n[y] once  [s] this session  [a] always  [n] deny`);
      case 'approval_resolved': {
        const i = this.prompts.findIndex((p) => p.id === event.id);
        if (i >= 0 && event.decision !== 'awaiting_note') this.prompts.splice(i, 1);
        return this.print(`(approval ${event.decision}${event.by ? ` by ${event.by}` : ''})`);
      }
      case 'question': {
        this.prompts.push({ kind: 'question', id: event.id, answers: event.suggestedAnswers });
        const options = event.suggestedAnswers.map((a, i) => `  ${i + 1}. ${a}`).join('\n');
        return this.print(`❓ ${event.question}${options ? `\n${options}` : ''}`);
      }
      case 'question_resolved': {
        const i = this.prompts.findIndex((p) => p.id === event.id);
        if (i >= 0) this.prompts.splice(i, 1);
        if (event.status === 'superseded') this.print('(question superseded)');
        return;
      }
      case 'notification':
        return this.print(`🔔 [${event.source}]${event.title ? ` ${event.title}:` : ''} ${event.text}`);
      case 'attachment':
        return this.print(`📎 ${event.path}${event.caption ? ` — ${event.caption}` : ''}`);
      case 'error':
        return this.print(`error: ${event.message}`);
      case 'turn_done':
        if (event.status !== 'done') this.print(`(turn ${event.status})`);
        return;
      case 'turn_started':
        return;
    }
  }

  async sendFile(_conversation: Conversation, file: OutboundFile): Promise<void> {
    this.print(`📎 ${file.path}${file.caption ? ` — ${file.caption}` : ''}`);
  }
}
