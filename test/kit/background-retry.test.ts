/**
 * A convenience tried again in the background (`kit/background-retry.ts`): a failure is warned
 * about and tried again after a doubling pause until the task succeeds; stop ends the retries and
 * aborts a try under way.
 */
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { BackgroundRetry } from '../../src/kit/background-retry.js';
import { silentLogger } from '../../src/log.js';

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

describe('background retry', () => {
  it('tries again after each failure, with a doubling pause, until the task succeeds', async () => {
    const warnings: Array<{ retryInMs: number; msg: string; err: { message: string } }> = [];
    const log = pino({ level: 'warn' }, { write: (line: string) => warnings.push(JSON.parse(line)) });
    const retry = new BackgroundRetry({ log, firstMs: 20, maxMs: 50, failed: 'menu failed' });
    const tries: number[] = [];
    const started = Date.now();
    retry.start(async () => {
      tries.push(Date.now() - started);
      if (tries.length < 4) throw new Error(`refused ${tries.length}`);
    });
    while (tries.length < 4) await sleep(5);
    await sleep(60);
    expect(tries).toHaveLength(4);
    expect(warnings.map((w) => w.retryInMs)).toEqual([20, 40, 50]);
    expect(warnings.map((w) => w.err.message)).toEqual(['refused 1', 'refused 2', 'refused 3']);
    expect(warnings[0]?.msg).toBe('menu failed');
    // Pauses of 20, 40 and 50 ms (the longest) between the tries.
    expect(tries[3]! - tries[0]!).toBeGreaterThanOrEqual(105);
    await retry.stop();
  });

  it('stop ends the retries and aborts the try under way', async () => {
    const retry = new BackgroundRetry({ log: silentLogger(), firstMs: 10, maxMs: 10, failed: 'failed' });
    let tries = 0;
    let aborted = false;
    retry.start(
      (signal) =>
        new Promise((_, reject) => {
          tries++;
          if (tries < 3) return reject(new Error('not yet'));
          signal.addEventListener('abort', () => {
            aborted = true;
            reject(new Error('aborted'));
          });
        }),
    );
    while (tries < 3) await sleep(5);
    await retry.stop();
    expect(aborted).toBe(true);
    await sleep(40);
    expect(tries).toBe(3);
  });

  it('a task that succeeds at once is not tried again', async () => {
    const retry = new BackgroundRetry({ log: silentLogger(), firstMs: 5, maxMs: 5, failed: 'failed' });
    let tries = 0;
    retry.start(async () => {
      tries++;
    });
    await sleep(30);
    expect(tries).toBe(1);
    await retry.stop();
  });
});
