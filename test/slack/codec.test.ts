import { describe, expect, it } from 'vitest';
import { decodeAction, encodeAction } from '../../src/channels/slack/codec.js';
import type { Action } from '../../src/contract/actions.js';

describe('Slack button payloads', () => {
  it('route on sb_<kind>_<position> and carry the shared compact text in the value', () => {
    const actions: Action[] = [
      { kind: 'approval', id: 'apr1', choice: 'session' },
      { kind: 'question', id: 'q1', index: 2 },
      { kind: 'job', id: 'jb1', op: 'delete' },
      { kind: 'pairing', code: 'ABC234' },
    ];
    expect(actions.map((a, i) => encodeAction(a, i))).toEqual([
      { action_id: 'sb_approval_0', value: 'a:apr1:s' },
      { action_id: 'sb_question_1', value: 'q:q1:2' },
      { action_id: 'sb_job_2', value: 'j:jb1:d' },
      { action_id: 'sb_pairing_3', value: 'p:ABC234' },
    ]);
    for (const [i, a] of actions.entries()) {
      const { action_id, value } = encodeAction(a, i);
      expect(decodeAction(action_id, value)).toEqual(a);
    }
  });

  it('refuses a value that does not match its action id, or garbled values', () => {
    expect(decodeAction('sb_question_0', 'a:apr1:y')).toBeNull();
    expect(decodeAction('sb_approval_0', 'a:apr1:q')).toBeNull();
    expect(decodeAction('sb_approval_0', undefined)).toBeNull();
    expect(decodeAction('sb_approval_0', 'apr1')).toBeNull();
    expect(decodeAction('sb_job_0', 'j:jb1:p:x')).toBeNull();
    expect(decodeAction('sb_other_0', 'a:apr1:y')).toBeNull();
    expect(decodeAction('xx_approval_0', 'a:apr1:y')).toBeNull();
  });

  describe('cards posted by earlier versions', () => {
    it('decode the old approval buttons (value = approval id)', () => {
      expect(decodeAction('sb_approve_once', 'apr1')).toEqual({ kind: 'approval', id: 'apr1', choice: 'once' });
      expect(decodeAction('sb_approve_session', 'apr1')).toEqual({ kind: 'approval', id: 'apr1', choice: 'session' });
      expect(decodeAction('sb_approve_always', 'apr1')).toEqual({ kind: 'approval', id: 'apr1', choice: 'always' });
      expect(decodeAction('sb_deny', 'apr1')).toEqual({ kind: 'approval', id: 'apr1', choice: 'deny' });
      expect(decodeAction('sb_deny_no_note', 'apr1')).toEqual({ kind: 'approval', id: 'apr1', choice: 'no_note' });
      expect(decodeAction('sb_approve_once', '')).toBeNull();
      expect(decodeAction('sb_approve_once', undefined)).toBeNull();
      expect(decodeAction('sb_approve_never', 'apr1')).toBeNull();
    });

    it('decode the old job buttons (sb_job_<op>, value = job id)', () => {
      for (const op of ['pause', 'resume', 'run', 'delete'] as const)
        expect(decodeAction(`sb_job_${op}`, 'jb1')).toEqual({ kind: 'job', id: 'jb1', op });
      expect(decodeAction('sb_job_explode', 'jb1')).toBeNull();
      expect(decodeAction('sb_job_pause', '')).toBeNull();
    });

    it('decode the old pairing button (value = code)', () => {
      expect(decodeAction('sb_pair', 'ABC234')).toEqual({ kind: 'pairing', code: 'ABC234' });
      expect(decodeAction('sb_pair', '')).toBeNull();
    });

    it('decode the old answer buttons (sb_answer_<i>, value = {"id","a"}) by index', () => {
      expect(decodeAction('sb_answer_1', JSON.stringify({ id: 'q1', a: 'blue' }))).toEqual({
        kind: 'question',
        id: 'q1',
        index: 1,
      });
      for (const value of [
        'not json',
        'null',
        '"q1"',
        JSON.stringify({ id: 'q1' }),
        JSON.stringify({ id: '', a: 'x' }),
        JSON.stringify({ id: 5, a: 'x' }),
      ]) {
        expect(decodeAction('sb_answer_1', value), value).toBeNull();
      }
      expect(decodeAction('sb_answer_100', JSON.stringify({ id: 'q1', a: 'x' }))).toBeNull();
    });
  });
});
