import { describe, expect, it } from 'vitest';
import type { Action } from '../../src/contract/actions.js';
import { actionFromJson, decodeAction, encodeAction, payloadCodec } from '../../src/delivery/action-codec.js';

const EVERY_KIND: Action[] = [
  ...(['once', 'session', 'always', 'deny', 'no_note'] as const).map(
    (choice): Action => ({ kind: 'approval', id: 'apr_0123456789abcdef', choice }),
  ),
  { kind: 'question', id: 'q1', index: 0 },
  { kind: 'question', id: 'q1', index: 99 },
  { kind: 'pairing', code: 'ABC234' },
  ...(['pause', 'resume', 'run', 'delete'] as const).map((op): Action => ({ kind: 'job', id: 'job_7', op })),
];

describe('the action codec', () => {
  it('round-trips every kind, choice and operation, as compact text and as JSON', () => {
    for (const action of EVERY_KIND) {
      expect(decodeAction(encodeAction(action))).toEqual(action);
      expect(actionFromJson(JSON.parse(JSON.stringify(action)))).toEqual(action);
    }
  });

  it('writes the compact form buttons already posted carry', () => {
    expect(encodeAction({ kind: 'approval', id: 'a1', choice: 'once' })).toBe('a:a1:y');
    expect(encodeAction({ kind: 'approval', id: 'a1', choice: 'always' })).toBe('a:a1:A');
    expect(encodeAction({ kind: 'approval', id: 'a1', choice: 'no_note' })).toBe('a:a1:x');
    expect(encodeAction({ kind: 'question', id: 'q1', index: 3 })).toBe('q:q1:3');
    expect(encodeAction({ kind: 'pairing', code: 'ABC234' })).toBe('p:ABC234');
    expect(encodeAction({ kind: 'job', id: 'j1', op: 'run' })).toBe('j:j1:n');
  });

  it('refuses to encode what it could not decode again', () => {
    expect(() => encodeAction({ kind: 'approval', id: 'a:b', choice: 'once' })).toThrow(/':'/);
    expect(() => encodeAction({ kind: 'job', id: '', op: 'run' })).toThrow(/non-empty/);
    expect(() => encodeAction({ kind: 'pairing', code: 'x:y' })).toThrow(/':'/);
    expect(() => encodeAction({ kind: 'question', id: 'q1', index: 100 })).toThrow(/0–99/);
    expect(() => encodeAction({ kind: 'question', id: 'q1', index: -1 })).toThrow(/0–99/);
  });

  it('decodes forged or garbled text to null', () => {
    const forged = [
      undefined,
      null,
      '',
      'a',
      'a:x',
      'a:x:z', // unknown choice code
      'a:x:Y',
      'a::y', // empty id
      'a:x:y:extra',
      'q:x:abc',
      'q:x:100',
      'q:x:-1',
      'q:x:07', // a second spelling of index 7
      'q:x:',
      'q:x:1.5',
      'p:',
      'p:ABC:1',
      'j:x:z',
      'j:x',
      'j::p',
      'zz:1',
      'x:id:y',
      '{"kind":"approval","id":"a","choice":"once"}',
    ];
    for (const text of forged) expect(decodeAction(text), String(text)).toBeNull();
  });

  it('refuses JSON actions of the wrong shape', () => {
    const bad: unknown[] = [
      null,
      'a:x:y',
      42,
      [],
      {},
      { kind: 'approval', id: 'a1', choice: 'yes' },
      { kind: 'approval', id: 'a1', choice: 'toString' }, // inherited names are not choices
      { kind: 'approval', id: '', choice: 'once' },
      { kind: 'approval', id: 'a:1', choice: 'once' },
      { kind: 'approval', id: 7, choice: 'once' },
      { kind: 'question', id: 'q1', index: 1.5 },
      { kind: 'question', id: 'q1', index: '1' },
      { kind: 'question', id: 'q1', index: 100 },
      { kind: 'question', id: 'q1' },
      { kind: 'job', id: 'j1', op: 'explode' },
      { kind: 'job', id: 'j1', op: 'constructor' },
      { kind: 'pairing', code: '' },
      { kind: 'pairing', code: 5 },
      { kind: 'shutdown', id: 'x' },
    ];
    for (const raw of bad) expect(actionFromJson(raw), JSON.stringify(raw)).toBeNull();
  });
});

describe('a platform payload codec', () => {
  it('counts bytes or characters against the limit, and refuses to draw a payload over it', () => {
    const bytes = payloadCodec({ field: 'data', platform: 'P', max: 12, unit: 'bytes' });
    expect(bytes.encode({ kind: 'pairing', code: 'ABCDEFGHIJ' })).toBe('p:ABCDEFGHIJ');
    // "é" is two bytes: 12 characters, 13 bytes.
    expect(() => bytes.encode({ kind: 'pairing', code: 'ABCDEFGHIé' })).toThrow("data is 13 bytes, over P's 12");
    const chars = payloadCodec({ field: 'id', platform: 'Q', max: 12, unit: 'characters' });
    expect(chars.encode({ kind: 'pairing', code: 'ABCDEFGHIé' })).toBe('p:ABCDEFGHIé');
    expect(() => chars.encode({ kind: 'question', id: 'a:b', index: 0 })).toThrow(/':'/);
  });

  it('puts the prefix before the compact text, and decodes only payloads with it within the limit', () => {
    const codec = payloadCodec({ field: 'id', platform: 'Q', max: 20, unit: 'characters', prefix: 'sb:' });
    const action: Action = { kind: 'job', id: 'job_7', op: 'run' };
    expect(codec.encode(action)).toBe('sb:j:job_7:n');
    expect(codec.decode('sb:j:job_7:n')).toEqual(action);
    for (const data of [undefined, '', 'j:job_7:n', 'xx:j:job_7:n', `sb:p:${'x'.repeat(20)}`, 'sb:zz'])
      expect(codec.decode(data)).toBeNull();
  });
});
