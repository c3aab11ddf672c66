/**
 * A surface for presenter tests: records every call with the (simulated) time it happened,
 * splits Markdown into parts of `limit` characters, and fails calls on demand.
 */
import type { Token } from 'marked';
import type { Emitter, FailureClass, OutboundUpload, Part, Surface } from '../../src/contract/surface.js';

/** A scripted failure of the next call of an operation. */
export class FakeFailure extends Error {
  constructor(
    readonly cls: FailureClass,
    readonly landed = false,
  ) {
    super(cls.reason);
  }
}

export interface FakeCall {
  op: 'post' | 'edit' | 'delete' | 'upload';
  ref: string;
  text: string;
  at: number;
}

function plain(tokens: Token[]): string {
  return tokens
    .map((t) => ('raw' in t ? String(t.raw) : ''))
    .join('')
    .trim();
}

/** Split text into pieces of at most `limit` characters (the platform limit of this surface). */
function pieces(text: string, limit: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += limit) out.push(text.slice(i, i + limit));
  return out;
}

export class FakeSurface implements Surface<string> {
  readonly calls: FakeCall[] = [];
  /** What each message shows now, by ref (deleted ones removed). */
  readonly messages = new Map<string, string>();
  readonly typingLog: boolean[] = [];
  /** Failures for the next calls of an op, in order. */
  readonly failNext: Record<string, FakeFailure[]> = {};
  postDelayMs = 0;
  private n = 0;
  readonly emitter: Emitter;

  constructor(
    readonly streamIntervalMs = 200,
    readonly limit = 50,
  ) {
    const part = (text: string): Part => ({ body: { text }, text });
    this.emitter = {
      markdown: (tokens, title) => pieces((title ? `# ${title}\n` : '') + plain(tokens), this.limit).map(part),
      notice: (c) => [part(`! ${c.text}`)],
      approval: (c) => [part(`approval ${c.label} [${c.state}]${c.by ? ` by ${c.by}` : ''}`)],
      question: (c) => [part(`question ${c.question} [${c.state}]`)],
      tool: (c, tail) => [part(`tool ${c.label} [${c.state}]${tail ? ` ${tail.trim().split('\n').at(-1)}` : ''}`)],
    };
  }

  address(): string | Promise<string> {
    return 'chat';
  }

  private failure(op: string): void {
    const f = this.failNext[op]?.shift();
    if (f) throw f;
  }

  async post(_a: string, part: Part): Promise<string> {
    if (this.postDelayMs) await new Promise((r) => setTimeout(r, this.postDelayMs));
    const f = this.failNext.post?.[0];
    if (f?.landed) {
      // The platform took the message, but the answer was lost.
      this.failNext.post?.shift();
      const ref = `m${++this.n}`;
      this.messages.set(ref, part.text);
      this.calls.push({ op: 'post', ref, text: part.text, at: Date.now() });
      throw f;
    }
    this.failure('post');
    const ref = `m${++this.n}`;
    this.messages.set(ref, part.text);
    this.calls.push({ op: 'post', ref, text: part.text, at: Date.now() });
    return ref;
  }

  async edit(_a: string, ref: string, part: Part): Promise<void> {
    this.failure('edit');
    if (!this.messages.has(ref)) throw new FakeFailure({ kind: 'gone', reason: 'message to edit not found' });
    this.messages.set(ref, part.text);
    this.calls.push({ op: 'edit', ref, text: part.text, at: Date.now() });
  }

  async delete(_a: string, ref: string): Promise<void> {
    this.messages.delete(ref);
    this.calls.push({ op: 'delete', ref, text: '', at: Date.now() });
  }

  async upload(_a: string, file: OutboundUpload): Promise<string> {
    this.failure('upload');
    const ref = `f${++this.n}`;
    this.messages.set(ref, `file ${file.name}`);
    this.calls.push({ op: 'upload', ref, text: file.name, at: Date.now() });
    this.uploaded.push({ name: file.name, bytes: await file.bytes() });
    return ref;
  }

  /** What each upload sent: the name and the bytes (of the copy taken when the file was sent). */
  readonly uploaded: Array<{ name: string; bytes: Buffer }> = [];

  typing(_a: string, on: boolean): void {
    this.typingLog.push(on);
  }

  classify(err: unknown): FailureClass {
    if (err instanceof FakeFailure) return err.cls;
    return { kind: 'transient', reason: String(err) };
  }

  async findPosted(_a: string, part: Part, after: string | undefined): Promise<string | undefined> {
    const afterN = after ? Number(after.slice(1)) : 0;
    return [...this.messages.entries()].find(([ref, text]) => text === part.text && Number(ref.slice(1)) > afterN)?.[0];
  }

  /** Texts of the messages still shown, in posting order. */
  shown(): string[] {
    return [...this.messages.values()];
  }

  ops(op: FakeCall['op']): FakeCall[] {
    return this.calls.filter((c) => c.op === op);
  }
}
