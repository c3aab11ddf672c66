import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { parseStepRef, StepMessageGone, StepMessages, type StepStream } from '../../src/kit/step-messages.js';

type Step = { id: string; text: string };

/** A platform's streams in memory: which messages still stream, and what each shows. */
function fakeStream() {
  let next = 1;
  const streaming = new Set<string>();
  const shown = new Map<string, Step[]>();
  const redrawn: string[] = [];
  const stream: StepStream<string, Step> = {
    async start(_address, step) {
      const ts = `m${next++}`;
      streaming.add(ts);
      shown.set(ts, [step]);
      return ts;
    },
    async append(_address, ts, steps, stop) {
      if (!streaming.has(ts)) return false;
      shown.set(ts, [...(shown.get(ts) ?? []), ...steps]);
      if (stop) streaming.delete(ts);
      return true;
    },
    async stop(_address, ts) {
      streaming.delete(ts);
    },
    async redraw(_address, ts, steps) {
      redrawn.push(ts);
      shown.set(ts, steps);
    },
  };
  return { stream, streaming, shown, redrawn };
}

const step = (text: string) => (id: string) => ({ id, text });

function steps(fake: ReturnType<typeof fakeStream>, clock = { t: 0 }) {
  return new StepMessages<string, Step>({
    stream: fake.stream,
    thread: (a) => a,
    rolloverMs: 1000,
    log: pino({ level: 'silent' }),
    now: () => clock.t,
  });
}

describe('StepMessages', () => {
  it('puts the running steps of a thread into one message and closes it when something else comes', async () => {
    const fake = fakeStream();
    const s = steps(fake);
    expect(await s.post('T', step('one'), true)).toBe('m1#t1');
    expect(await s.post('T', step('two'), false)).toBe('m1#t2');
    await s.close('T');
    expect(fake.streaming.has('m1')).toBe(false);
    // A finished call does not open a message of its own; a running one opens the next.
    expect(await s.post('T', step('three'), false)).toBeNull();
    expect(await s.post('T', step('four'), true)).toBe('m2#t1');
    expect(fake.shown.get('m1')?.map((x) => x.text)).toEqual(['one', 'two']);
  });

  it('appends updates while the message streams and redraws it whole once it does not', async () => {
    const fake = fakeStream();
    const s = steps(fake);
    const ref = parseStepRef((await s.post('T', step('one'), true)) as string);
    expect(ref).toEqual({ ts: 'm1', id: 't1' });
    await s.edit('T', ref!, { id: 't1', text: 'one done' });
    expect(fake.redrawn).toEqual([]);
    fake.streaming.delete('m1');
    await s.edit('T', ref!, { id: 't1', text: 'one failed' });
    expect(fake.redrawn).toEqual(['m1']);
    expect(fake.shown.get('m1')).toEqual([{ id: 't1', text: 'one failed' }]);
  });

  it('rolls over to a new message once the open one is older than the limit', async () => {
    const fake = fakeStream();
    const clock = { t: 0 };
    const s = steps(fake, clock);
    await s.post('T', step('one'), true);
    clock.t = 1000;
    expect(await s.post('T', step('two'), true)).toBe('m2#t1');
    expect(fake.streaming.has('m1')).toBe(false);
  });

  it('after a restart stops a still open message with the update, else says the message is gone', async () => {
    const fake = fakeStream();
    await steps(fake).post('T', step('one'), true);
    await steps(fake).edit('T', { ts: 'm1', id: 't1' }, { id: 't1', text: 'done' });
    expect(fake.streaming.has('m1')).toBe(false);
    await expect(steps(fake).edit('T', { ts: 'm1', id: 't1' }, { id: 't1', text: 'x' })).rejects.toBeInstanceOf(
      StepMessageGone,
    );
    expect(parseStepRef('1234.5678')).toBeNull();
  });

  it('once the platform refuses steps, shows every later line the ordinary way for the run', async () => {
    const fake = fakeStream();
    let refuse = true;
    const start = fake.stream.start;
    fake.stream.start = async (address, first) => {
      if (refuse) throw Object.assign(new Error('refused'), { code: 'invalid_chunks' });
      return start(address, first);
    };
    const s = new StepMessages<string, Step>({
      stream: fake.stream,
      thread: (a) => a,
      rolloverMs: 1000,
      log: pino({ level: 'silent' }),
      refused: { message: 'steps refused', refusal: (err) => (err as { code?: string }).code },
    });
    expect(s.native.inForce).toBe(true);
    expect(await s.post('T', step('one'), true)).toBeNull();
    expect(s.native.refused).toBe('invalid_chunks');
    refuse = false;
    expect(await s.post('T', step('two'), true)).toBeNull();
    expect(fake.shown.size).toBe(0);
  });

  it('rethrows a failure that is not a refusal', async () => {
    const fake = fakeStream();
    fake.stream.start = async () => {
      throw new Error('network down');
    };
    await expect(steps(fake).post('T', step('one'), true)).rejects.toThrow('network down');
  });
});
