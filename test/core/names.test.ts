/**
 * People's names are the core's: the name directory remembers the name a principal last came
 * with (an inbound message's `userName`, a tapping person's name passed with the action), keeps
 * a bounded number in memory, keeps every name in the store (another instance and a restarted one
 * know it, a SIGKILL loses none), and names everyone alike on every channel.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { NameDirectory } from '../../src/core/names.js';
import { silentLogger } from '../../src/log.js';
import type { Db } from '../../src/store/db.js';
import { type ScriptedLlm, startScriptedLlm } from '../emulators/llm.js';
import { startTelegramEmulator, type TelegramEmulator } from '../emulators/telegram.js';
import { childEnv, killLeftRunning, type StartedProcess, startProcess } from '../helpers/child-start.js';
import { type Harness, startHarness, waitFor } from '../helpers/harness.js';
import { openTestDatabase } from '../helpers/test-db.js';

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
    const names = new NameDirectory(undefined, 2);
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
  let other: Harness | undefined;
  afterEach(async () => {
    await other?.close();
    await h?.close();
    h = other = undefined;
  });

  it('remembers the userName of a submitted message, and a tapping person’s name passed with the action', async () => {
    h = await startHarness();
    expect(h.core.names.nameOf('test:u1')).toBe('u1');
    await h.send('hello', { userName: 'Uma One' });
    expect(h.core.names.nameOf('test:u1')).toBe('Uma One');
    // A refused tap (not an admin) still teaches the core who tapped.
    const outcome = await h.core.act({ kind: 'pairing', code: 'NOPE' }, 'test:u7', { byName: 'Seven' });
    expect(outcome.ok).toBe(false);
    expect(h.core.names.nameOf('test:u7')).toBe('Seven');
  });

  it('a restarted core knows the names at once', async () => {
    h = await startHarness();
    await h.send('hello', { userName: 'Uma One' });
    await h.restart();
    expect(h.core.names.nameOf('test:u1')).toBe('Uma One');
  });

  it('another instance over the same database learns a name it never saw: a lookup asks the store, drawing knows it after', async () => {
    h = await startHarness();
    other = await startHarness({ dir: h.dir });
    await h.send('hello', { userName: 'Uma One' });
    expect(other.core.names.nameOf('test:u1')).toBe('u1'); // not held yet: the raw id this once
    expect(await other.core.names.lookup('test:u1')).toBe('Uma One');
    expect(other.core.names.nameOf('test:u1')).toBe('Uma One');
    // A tapping person's name reaches the other instance's look-up too.
    await h.core.act({ kind: 'pairing', code: 'NOPE' }, 'test:u9', { byName: 'Nina' });
    expect(await other.core.names.lookup('test:u9')).toBe('Nina');
  });
});

describe('a SIGKILL loses no name', () => {
  let emu: TelegramEmulator | undefined;
  let llm: ScriptedLlm | undefined;
  let dir: string | undefined;
  let db: Db | undefined;
  const procs: StartedProcess[] = [];
  const alice = { id: 111, first_name: 'Alice', last_name: 'Liddell' };

  afterEach(async () => {
    await killLeftRunning(procs);
    await db?.destroy();
    await emu?.close();
    await llm?.close();
    if (dir) rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
  });

  it('the name a Telegram message brought is known to the directory over the killed process’s database', async () => {
    emu = await startTelegramEmulator();
    llm = await startScriptedLlm();
    llm.setHandler(() => ({ text: 'hi there' }));
    dir = mkdtempSync(path.join(os.tmpdir(), 'sb-names-kill-'));
    const env = childEnv(dir, llm.url, '', {
      TELEGRAM_BOT_TOKEN: emu.token,
      TELEGRAM_API_ROOT: emu.apiRoot,
      TELEGRAM_ALLOWED_USERS: String(alice.id),
    });
    const first = await startProcess(env);
    procs.push(first);
    emu.sendText(alice, 'hello');
    await waitFor(
      () => emu?.messages(alice.id).some((m) => m.kind === 'text' && m.plain === 'hi there'),
      'the answer',
      30_000,
    );
    await first.kill();
    db = openTestDatabase(dir, 'db');
    const names = new NameDirectory({ db, log: silentLogger() });
    await names.load();
    expect(names.nameOf(`telegram:${alice.id}`)).toBe('Alice Liddell');
  }, 90_000);
});
