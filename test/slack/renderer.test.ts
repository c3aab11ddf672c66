// biome-ignore-all lint/suspicious/noExplicitAny: Slack payloads and Block Kit JSON are loosely typed by nature
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ConversationRenderer, type SlackPoster } from '../../src/channels/slack/renderer.js';

const log = pino({ level: 'silent' });

/** A poster that records calls; `postDelayMs` stands in for a post being retried after a 429. */
function fakePoster(postDelayMs = 0) {
  const calls: Array<{ op: 'post' | 'update' | 'remove'; ts: string; text: string; at: number }> = [];
  let n = 0;
  const poster: SlackPoster = {
    async post(_target, message) {
      if (postDelayMs) await new Promise((r) => setTimeout(r, postDelayMs));
      const ts = `1.${++n}`;
      calls.push({ op: 'post', ts, text: message.blocks.map((b: any) => b.text?.text ?? b.elements?.[0]?.text).join('\n'), at: Date.now() });
      return ts;
    },
    async update(_channel, ts, message) {
      calls.push({ op: 'update', ts, text: message.blocks.map((b: any) => b.text?.text ?? b.elements?.[0]?.text).join('\n'), at: Date.now() });
    },
    async remove(_channel, ts) {
      calls.push({ op: 'remove', ts, text: '', at: Date.now() });
    },
  };
  return { poster, calls };
}

const target = () => ({ channel: 'C1', threadTs: '100.1' });

/** Let simulated time pass (fake timers), running the promises it releases. */
const pass = (ms: number) => vi.advanceTimersByTimeAsync(ms);

describe('ConversationRenderer', () => {
  // Simulated time: the throttle is asserted exactly, without depending on the machine's speed.
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('streams into one message no more often than the interval and lands the final text', async () => {
    const { poster, calls } = fakePoster();
    const r = new ConversationRenderer(target, poster, 200, log);
    // 30 deltas 15 ms apart: 450 ms of streaming
    for (let i = 0; i < 30; i++) {
      r.delta(`word${i} `);
      await pass(15);
    }
    await r.reply(Array.from({ length: 30 }, (_, i) => `word${i}`).join(' '));
    await r.idle();
    expect(calls.filter((c) => c.op === 'post')).toHaveLength(1);
    // posted at once (t=0), updated at t=200 and t=400, then the final update
    expect(calls.map((c) => [c.op, c.at])).toEqual([
      ['post', calls[0]!.at],
      ['update', calls[0]!.at + 200],
      ['update', calls[0]!.at + 400],
      ['update', calls[0]!.at + 450],
    ]);
    const last = calls[calls.length - 1]!;
    expect(last.ts).toBe(calls[0]!.ts);
    expect(last.text).toContain('word0 word1');
    expect(last.text).toContain('word29');
  });

  it('never posts twice while the first post is still being retried', async () => {
    const { poster, calls } = fakePoster(300);
    const r = new ConversationRenderer(target, poster, 20, log);
    for (let i = 0; i < 10; i++) {
      r.delta(`t${i} `);
      await pass(30);
    }
    const final = r.reply('final text');
    await pass(300);
    await final;
    expect(calls.filter((c) => c.op === 'post')).toHaveLength(1);
    expect(calls[calls.length - 1]).toMatchObject({ op: 'update', ts: calls[0]!.ts, text: 'final text' });
  });

  it('closes the live text before a tool line and does not repeat it on a late reply', async () => {
    const { poster, calls } = fakePoster();
    const r = new ConversationRenderer(target, poster, 10_000, log);
    r.delta('Let me check.');
    await pass(20);
    await r.toolStarted('c1', 'bash git status');
    await r.reply('Let me check.');
    await r.toolFinished('c1', 'bash', 'done', 'clean');
    await r.reply('All clean.');
    await r.idle();
    const texts = calls.map((c) => `${c.op}:${c.text}`);
    expect(texts).toEqual([
      'post:Let me check.',
      'post:🔧 `bash git status`…',
      'update:✅ `bash git status` — clean',
      'post:All clean.',
    ]);
  });

  it('continues a reply that outgrows one message in a second one, and trims it when the final text is shorter', async () => {
    const { poster, calls } = fakePoster();
    const r = new ConversationRenderer(target, poster, 5, log);
    const para = (i: number) => `Paragraph ${i} ${'lorem ipsum '.repeat(400)}\n\n`;
    for (let i = 0; i < 12; i++) {
      r.delta(para(i));
      await pass(10);
    }
    await pass(30);
    await r.idle();
    const posts = calls.filter((c) => c.op === 'post');
    expect(posts.length).toBe(2);
    expect(calls.filter((c) => c.ts === posts[1]!.ts).at(-1)!.text).toContain('Paragraph 11');
    // the final reply is shorter than what streamed: the second message is removed
    await r.reply(para(0));
    await r.idle();
    expect(calls.filter((c) => c.op === 'post')).toHaveLength(2);
    expect(calls.at(-1)).toMatchObject({ op: 'remove', ts: posts[1]!.ts });
    const lastOfFirst = calls.filter((c) => c.ts === posts[0]!.ts).at(-1)!;
    expect(lastOfFirst.text).toContain('Paragraph 0');
    expect(lastOfFirst.text).not.toContain('Paragraph 1 ');
  });

  it('shows the last line of streamed tool output on the tool line, throttled, then the outcome', async () => {
    const { poster, calls } = fakePoster();
    const r = new ConversationRenderer(target, poster, 50, log);
    await r.toolStarted('c9', 'bash npm test');
    for (let i = 1; i <= 20; i++) {
      r.toolOutput('c9', `line ${i}\n`);
      await pass(10);
    }
    await pass(100);
    await r.idle();
    const updates = calls.filter((c) => c.op === 'update');
    // 200 ms of output at one update per 50 ms interval
    expect(updates.length).toBe(4);
    expect(updates.at(-1)!.text).toBe('🔧 `bash npm test`… `line 20`');
    await r.toolFinished('c9', 'bash', 'failed', 'exit 1');
    r.toolOutput('c9', 'late output\n');
    await pass(80);
    await r.idle();
    expect(calls.at(-1)!.text).toBe('❌ `bash npm test` — exit 1');
    expect(r.isIdle()).toBe(true);
  });
});
