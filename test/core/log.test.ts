import { Writable } from 'node:stream';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { REDACT_PATHS } from '../../src/log.js';

describe('logging', () => {
  it('redacts tokens, keys and message text', () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _enc, cb) {
        lines.push(chunk.toString());
        cb();
      },
    });
    const log = pino({ redact: { paths: REDACT_PATHS, censor: '[redacted]' } }, sink);
    log.info({ token: 'xoxb-secret', config: { bot_token: '123:ABC', api_key: 'sk-1' }, text: 'private words', msg2: 'ok' }, 'hello');
    const out = lines.join('');
    expect(out).not.toMatch(/xoxb-secret|123:ABC|sk-1|private words/);
    expect(out).toContain('[redacted]');
    expect(out).toContain('hello');
  });
});
