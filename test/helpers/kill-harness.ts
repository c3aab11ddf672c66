/**
 * The kill tests' world: a channel emulator and the scripted model, `switchboard start` as a child
 * process over a database the test reads too, started and SIGKILLed at a named moment and started
 * again, and the counts the tests judge by (what is lost, doubled or left as a fragment). Each kill
 * test file calls {@link useKillWorld} once at its top level; the hooks it registers give every
 * test a fresh world and leave no process behind.
 *
 * A start waits for the process's readiness ({@link CHILD_START_MS}); every other wait of a kill
 * test follows a (re)start and may include the recovery the new process does first
 * ({@link KILL_WAIT_MS}); a test's timeout is {@link killBudget} of its starts and waits.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, expect } from 'vitest';
import type { Db } from '../../src/store/db.js';
import { type ScriptedLlm, type ScriptedStep, startScriptedLlm } from '../emulators/llm.js';
import { type SlackEmulator, startSlackEmulator } from '../emulators/slack.js';
import { startTelegramEmulator, type TelegramEmulator } from '../emulators/telegram.js';
import { budget, CHILD_START_MS, times } from './budgets.js';
import { childEnv, killLeftRunning, type StartedProcess, startProcess } from './child-start.js';
import { waitFor as baseWaitFor } from './harness.js';
import { scriptedModel } from './kill-model.js';
import { openTestDatabase } from './test-db.js';

/** The Slack user who talks to the bot in the Slack kill tests. */
export const ALICE = 'UALICE';
/** Her direct message channel. */
export const DM = 'D1';
/** The Telegram user of the Telegram kill tests. */
export const telegramAlice = { id: 111, first_name: 'Alice' };

/** How a kill test's channel is started, given to the child, and seen to be up or down. */
export interface KillChannel<E> {
  /** Start the emulator (fresh for each test). */
  start(): Promise<E>;
  /** The child's environment for this channel. */
  env(emu: E): Record<string, string>;
  /** Ready for the test once the process has logged "switchboard started" (default: at once). */
  connected?(emu: E): boolean;
  /** The channel has seen a killed process go (default: at once). */
  disconnected?(emu: E): boolean;
  close(emu: E): Promise<void>;
}

/** Slack in Socket Mode: ready once the process's socket is connected, gone once it closed. */
export const slackSocket: KillChannel<SlackEmulator> = {
  async start() {
    const emu = await startSlackEmulator();
    emu.app.mode = 'socket';
    return emu;
  },
  env: (emu) => ({
    SLACK_BOT_TOKEN: 'xoxb-emulator',
    SLACK_APP_TOKEN: 'xapp-emulator',
    SLACK_API_URL: emu.apiUrl,
    SLACK_ALLOWED_USERS: ALICE,
  }),
  connected: (emu) => emu.socketCount() > 0,
  disconnected: (emu) => emu.socketCount() === 0,
  close: (emu) => emu.close(),
};

/** Slack's Events API over HTTP: events are posted to the process's port, ready when it serves. */
export const slackHttp: KillChannel<SlackEmulator> = {
  async start() {
    const emu = await startSlackEmulator();
    emu.app.mode = 'http';
    return emu;
  },
  env: (emu) => ({
    SLACK_BOT_TOKEN: 'xoxb-emulator',
    SLACK_SIGNING_SECRET: emu.app.signingSecret,
    SLACK_API_URL: emu.apiUrl,
    SLACK_ALLOWED_USERS: ALICE,
  }),
  close: (emu) => emu.close(),
};

/** Telegram: long polling needs no connection to wait for; the updates wait on the emulator. */
export const telegram: KillChannel<TelegramEmulator> = {
  start: () => startTelegramEmulator(),
  env: (emu) => ({
    TELEGRAM_BOT_TOKEN: emu.token,
    TELEGRAM_API_ROOT: emu.apiRoot,
    TELEGRAM_ALLOWED_USERS: String(telegramAlice.id),
  }),
  close: (emu) => emu.close(),
};

/** Options of {@link useKillWorld}. */
export interface KillWorldOptions {
  /** The temp folder's prefix (names the test in /tmp). */
  prefix: string;
  /** Extra TOML of the child's config file. */
  toml?: string;
}

/** One test's world; read it inside a test or hook (the fields are fresh for each test). */
export interface KillWorld<E> {
  emu: E;
  llm: ScriptedLlm;
  dir: string;
  /** The child's environment; a test may add to it before a start. */
  env: Record<string, string>;
  /** The child's database, opened by the test too (WAL: readers never block the writer). */
  db: Db;
  /**
   * Spawn `switchboard start` over the database and wait for its readiness: the "switchboard
   * started" line, then the channel's connection, both within one {@link CHILD_START_MS} from spawn.
   */
  start(options?: { unreaped?: boolean }): Promise<StartedProcess>;
  /** SIGKILL `p` (no shutdown, as in a power cut) and wait until the channel has seen it go. */
  kill(p: StartedProcess): Promise<void>;
  /** Deliveries the ledger could still send (pending, sending, streaming). */
  openRows(): Promise<number>;
  /**
   * Wait until the ledger holds the reply as a live stream shown as message `ref` (the moment to
   * kill a process mid-stream: the restart must finish that message, not post another).
   */
  streamRecorded(ref: string | number | undefined): Promise<void>;
  /**
   * Judge the chat: `expected` all shown, the ledger settled (so no late duplicate can come), and
   * then `shown()` exactly `expected`: nothing lost, nothing doubled, no fragment beside them.
   */
  expectExactly(shown: () => string[], expected: string[]): Promise<void>;
}

/**
 * The ceiling of a kill test's wait once the process is ready: what it waits for may be the
 * recovery the restarted process does first (resending stored answers, redrawing cards), so more
 * than a step of a settled process; the value these files used before they shared this harness.
 */
export const KILL_WAIT_MS = 30_000;

/** A wait of a kill test, with {@link KILL_WAIT_MS} unless told. */
export function waitFor<T>(check: () => T | Promise<T>, what: string, timeoutMs = KILL_WAIT_MS) {
  return baseWaitFor(check, what, timeoutMs);
}

/**
 * A kill test's timeout from what it contains: `starts` child starts ({@link CHILD_START_MS} each)
 * and `waits` waits ({@link KILL_WAIT_MS} each: every `waitFor`, each held call's `arrived`, each
 * {@link KillWorld.kill}, and two for each {@link KillWorld.expectExactly}).
 */
export function killBudget(starts: number, waits: number): number {
  return budget(...times(starts, CHILD_START_MS), ...times(waits, KILL_WAIT_MS));
}

/**
 * Register the hooks of a kill test file and return the world of the running test. `channel`
 * says how the emulator is started and how the process is seen to be up and down.
 */
export function useKillWorld<E>(channel: KillChannel<E>, options: KillWorldOptions): () => KillWorld<E> {
  let world: KillWorld<E> | undefined;
  const procs: StartedProcess[] = [];

  beforeEach(async () => {
    const emu = await channel.start();
    const llm = await startScriptedLlm();
    llm.setHandler(scriptedModel);
    const dir = mkdtempSync(path.join(os.tmpdir(), `${options.prefix}-`));
    const db = openTestDatabase(dir, 'db');
    const w: KillWorld<E> = {
      emu,
      llm,
      dir,
      db,
      env: childEnv(dir, llm.url, options.toml ?? '', channel.env(emu)),
      async start(startOptions = {}) {
        const spawned = Date.now();
        const p = await startProcess(w.env, CHILD_START_MS, startOptions);
        procs.push(p);
        if (channel.connected) {
          // What is left of the same start-up budget (at least one poll).
          const left = Math.max(1, CHILD_START_MS - (Date.now() - spawned));
          await waitFor(() => channel.connected?.(emu), 'the channel connected', left);
        }
        return p;
      },
      async kill(p) {
        await p.kill();
        if (channel.disconnected) await waitFor(() => channel.disconnected?.(emu), 'the channel disconnected');
      },
      async openRows() {
        const row = await db
          .selectFrom('deliveries')
          .select(db.fn.countAll<number>().as('n'))
          .where('status', 'in', ['pending', 'sending', 'streaming'])
          .executeTakeFirstOrThrow();
        return Number(row.n);
      },
      async streamRecorded(ref) {
        await waitFor(async () => {
          const row = await db
            .selectFrom('deliveries')
            .select(['status', 'refs'])
            .where('kind', '=', 'reply')
            .executeTakeFirst();
          return row?.status === 'streaming' && row.refs.includes(String(ref));
        }, 'the streamed message recorded');
      },
      async expectExactly(shown, expected) {
        await waitFor(
          () => shown().length >= expected.length && expected.every((a) => shown().includes(a)),
          `answers ${JSON.stringify(expected)}`,
        );
        // Let any late duplicate show itself before judging.
        await waitFor(async () => (await w.openRows()) === 0, 'the ledger to be empty');
        expect(shown()).toEqual(expected);
      },
    };
    world = w;
  });

  afterEach(async () => {
    const w = world;
    world = undefined;
    await killLeftRunning(procs);
    if (!w) return;
    await w.db.destroy();
    await channel.close(w.emu);
    await w.llm.close();
    rmSync(w.dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
  });

  return () => {
    if (!world) throw new Error('the kill world is only there inside a test (useKillWorld registers its hooks)');
    return world;
  };
}

/**
 * The kill model, with the first answer to a `slow` question held: after its first words until
 * `resume` is called (the test has seen them shown), and a few words later until the process goes
 * away. The reply then stays a live stream, with an update under way, for as long as the test
 * needs to kill it, however slowly the process runs; the restarted process's request streams in full.
 * With `resumeAt` undefined there is only the hold at `stopAt` (no resume needed).
 */
export function heldSlowAnswer(holds: { resumeAt?: number; stopAt: number } = { resumeAt: 12, stopAt: 24 }): {
  model: (body: Parameters<typeof scriptedModel>[0]) => ScriptedStep;
  resume: () => void;
} {
  let resume: () => void = () => undefined;
  const resumed = new Promise<void>((resolve) => {
    resume = resolve;
  });
  let held = false;
  return {
    resume,
    model: (body) => {
      const step = scriptedModel(body);
      if (held || !('delayMs' in step) || !step.text.includes('slow')) return step;
      held = true;
      const forever = { afterChars: holds.stopAt, until: new Promise<void>(() => undefined) };
      return {
        ...step,
        pauses: holds.resumeAt === undefined ? [forever] : [{ afterChars: holds.resumeAt, until: resumed }, forever],
      };
    },
  };
}

/** Full visible text of a Slack bot message (its blocks' text when it has blocks). */
export function visible(m: { text: string; blocks?: Array<{ text?: { text?: string } }> }): string {
  return m.blocks?.length ? m.blocks.map((b) => b.text?.text ?? '').join('\n') : m.text;
}
