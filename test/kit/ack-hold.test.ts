import { describe, expect, it } from 'vitest';
import { AckHold } from '../../src/kit/ack-hold.js';

describe('AckHold', () => {
  it('sends the acknowledgement with its response once the recording settled', async () => {
    const hold = new AckHold(1_000);
    const body = {};
    const sent: unknown[] = [];
    let recorded!: () => void;
    const recording = new Promise<void>((resolve) => {
      recorded = resolve;
    });
    const done = hold.hold(
      body,
      async (ack) => {
        hold.record(body, recording);
        await ack({ ok: true });
        expect(sent).toEqual([]);
        expect(hold.awaiting(body)).toBe(true);
        setTimeout(recorded, 10);
      },
      async (r) => void sent.push(r),
    );
    await done;
    expect(sent).toEqual([{ ok: true }]);
    expect(hold.awaiting(body)).toBe(false);
  });

  it('acknowledges at once when nothing is to be recorded, and never when the handler did not ack', async () => {
    const hold = new AckHold(1_000);
    const sent: unknown[] = [];
    await hold.hold(
      {},
      async (ack) => ack('r'),
      async (r) => void sent.push(r),
    );
    await hold.hold(
      {},
      async () => {},
      async (r) => void sent.push(r),
    );
    expect(sent).toEqual(['r']);
  });

  it('sends no acknowledgement when the recording does not settle in time, and the event stays awaiting', async () => {
    const hold = new AckHold(1_000);
    const body = {};
    const sent: unknown[] = [];
    await hold.hold(
      body,
      async (ack) => {
        hold.record(body, new Promise(() => undefined));
        await ack();
      },
      async () => void sent.push('ack'),
      20,
    );
    expect(sent).toEqual([]);
    expect(hold.awaiting(body)).toBe(true);
  });

  it('counts a failed recording as settled (the core told the sender), and a throwing handler still settles', async () => {
    const hold = new AckHold(1_000);
    const body = {};
    const sent: unknown[] = [];
    await expect(
      hold.hold(
        body,
        async (ack) => {
          hold.record(body, Promise.reject(new Error('db down')));
          await ack();
          throw new Error('listener failed');
        },
        async () => void sent.push('ack'),
      ),
    ).rejects.toThrow('listener failed');
    expect(sent).toEqual(['ack']);
    expect(hold.awaiting(body)).toBe(false);
  });
});
