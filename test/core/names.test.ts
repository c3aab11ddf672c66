/**
 * People's names are the core's: the name directory remembers the name a principal last came
 * with (an inbound message's `userName`, a tapping person's name passed with the action), keeps
 * a bounded number, and names everyone alike on every channel.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { runAction } from '../../src/core/actions.js';
import { NameDirectory } from '../../src/core/names.js';
import { type Harness, startHarness } from '../helpers/harness.js';

describe('the name directory', () => {
  it('names a principal by the name it came with, else by its raw user id; nobody is "someone"', () => {
    const names = new NameDirectory();
    names.remember('telegram:42', 'Alice Doe');
    expect(names.nameOf('telegram:42')).toBe('Alice Doe');
    expect(names.nameOf('telegram:43')).toBe('43');
    expect(names.nameOf('local')).toBe('local');
    expect(names.nameOf(null)).toBe('someone');
    expect(names.nameOf(undefined)).toBe('someone');
  });

  it('a later name replaces the earlier one; a blank name or the bare id changes nothing', () => {
    const names = new NameDirectory();
    names.remember('slack:U1', 'Bob');
    names.remember('slack:U1', 'Robert');
    names.remember('slack:U1', '   ');
    names.remember('slack:U1', undefined);
    names.remember('slack:U1', 'U1');
    expect(names.nameOf('slack:U1')).toBe('Robert');
  });

  it('is bounded: past its size the least recently seen name is forgotten first', () => {
    const names = new NameDirectory(2);
    names.remember('t:1', 'One');
    names.remember('t:2', 'Two');
    names.remember('t:1', 'One'); // seen again: now the most recent
    names.remember('t:3', 'Three');
    expect(names.nameOf('t:1')).toBe('One');
    expect(names.nameOf('t:2')).toBe('2');
    expect(names.nameOf('t:3')).toBe('Three');
  });
});

describe('the core owns the names', () => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  it('remembers the userName of a submitted message, and a tapping person’s name passed with the action', async () => {
    h = await startHarness();
    expect(h.core.nameOf('test:u1')).toBe('u1');
    await h.send('hello', { userName: 'Uma One' });
    expect(h.core.nameOf('test:u1')).toBe('Uma One');
    // A refused tap (not an admin) still teaches the core who tapped.
    const outcome = await runAction(h.core, { kind: 'pairing', code: 'NOPE' }, 'test:u7', { byName: 'Seven' });
    expect(outcome.ok).toBe(false);
    expect(h.core.nameOf('test:u7')).toBe('Seven');
  });
});
