import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { leveledSdkLogger, sdkLogger, sdkLogLine } from '../../src/kit/sdk-logger.js';

describe('sdkLogger', () => {
  it('writes values as one line: strings as they are, errors by message, the rest as JSON', () => {
    expect(sdkLogLine(['a', new Error('boom'), { n: 1 }, 2])).toBe('a boom {"n":1} 2');
  });

  it("logs an SDK's debug and info one level lower, warn and error as they are", () => {
    const lines: Array<{ level: number; msg: string }> = [];
    const log = pino({ level: 'trace' }, { write: (s: string) => void lines.push(JSON.parse(s)) });
    const sdk = sdkLogger(log);
    sdk.debug('d');
    sdk.info('i');
    sdk.warn('w');
    sdk.error('e');
    expect(lines.map((l) => [l.level, l.msg])).toEqual([
      [10, 'd'],
      [20, 'i'],
      [40, 'w'],
      [50, 'e'],
    ]);
  });

  it('keeps the level an SDK sets and reads back, without filtering by it (pino filters)', () => {
    const lines: Array<{ level: number; msg: string }> = [];
    const log = pino({ level: 'trace' }, { write: (s: string) => void lines.push(JSON.parse(s)) });
    const sdk = leveledSdkLogger<'info' | 'error'>(log, 'info');
    expect(sdk.getLevel()).toBe('info');
    sdk.setLevel('error');
    sdk.setName('bolt-app');
    expect(sdk.getLevel()).toBe('error');
    sdk.info('still written, one level lower');
    expect(lines.map((l) => [l.level, l.msg])).toEqual([[20, 'still written, one level lower']]);
  });
});
