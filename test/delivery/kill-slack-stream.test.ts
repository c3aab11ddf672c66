/**
 * Kill test of Slack's native streams: `switchboard start` as a child process, SIGKILLed while a
 * reply streams into a chat.startStream message (an append on its way). The restarted process
 * finishes that same message: one whole answer, nothing doubled, no second message. And killed
 * while a tool call's task is on its way into the turn's steps message (task_update chunks): the
 * restarted process finishes the task in that message, once.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Db } from '../../src/store/db.js';
import { type ScriptedLlm, type ScriptedStep, startScriptedLlm } from '../emulators/llm.js';
import { eventCallback } from '../emulators/slack-payloads.js';
import { type SlackEmulator, startSlackEmulator } from '../emulators/slack.js';
import { childEnv, type StartedProcess, startProcess } from '../helpers/child-start.js';
import { waitFor as baseWaitFor } from '../helpers/harness.js';
import { answerFor, scriptedModel } from '../helpers/kill-model.js';
import { openTestDatabase } from '../helpers/test-db.js';

const ALICE = 'UALICE';
const DM = 'D1';

let emu: SlackEmulator;
let llm: ScriptedLlm;
let dir: string;
let env: Record<string, string>;
let db: Db;
const procs: StartedProcess[] = [];

/** Waits here span process starts: a longer default than the harness's. */
const waitFor = <T>(check: () => T | Promise<T>, what: string, timeoutMs = 30_000) =>
  baseWaitFor(check, what, timeoutMs);
const KILL_TEST_TIMEOUT_MS = 120_000;

/** The kill model; the first `slow` answer stops after its first words until the process is gone. */
function heldSlowAnswer(): (body: Parameters<typeof scriptedModel>[0]) => ScriptedStep {
  let held = false;
  return (body) => {
    const step = scriptedModel(body);
    if (held || !('delayMs' in step) || !step.text.includes('slow')) return step;
    held = true;
    return { ...step, pauses: [{ afterChars: 60, until: new Promise(() => undefined) }] };
  };
}

async function start(): Promise<StartedProcess> {
  const p = await startProcess(env);
  procs.push(p);
  await waitFor(() => emu.socketCount() > 0, 'the socket connection');
  return p;
}

beforeEach(async () => {
  emu = await startSlackEmulator();
  emu.app.mode = 'socket';
  llm = await startScriptedLlm();
  llm.setHandler(scriptedModel);
  dir = mkdtempSync(path.join(os.tmpdir(), 'sb-kill-slack-stream-'));
  env = childEnv(dir, llm.url, '[slack]\nstream_interval_ms = 100\n', {
    SLACK_BOT_TOKEN: 'xoxb-emulator',
    SLACK_APP_TOKEN: 'xapp-emulator',
    SLACK_API_URL: emu.apiUrl,
    SLACK_ALLOWED_USERS: ALICE,
  });
  db = openTestDatabase(dir, 'db');
});

afterEach(async () => {
  for (const p of procs.splice(0)) if (p.child.exitCode === null && p.child.signalCode === null) await p.kill();
  await db.destroy();
  await emu.close();
  await llm.close();
  rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
});

describe('slack: SIGKILL mid native stream', () => {
  it(
    'the restarted answer finishes the streamed message: one whole answer',
    async () => {
      llm.setHandler(heldSlowAnswer());
      const first = await start();
      const parent = emu.userMessage({ channel: DM, user: ALICE, text: 'thread' });
      const held = emu.hold('chat.appendStream', { match: (a) => a.channel === DM });
      await emu.deliver(
        'events_api',
        eventCallback(emu.userMessage({ channel: DM, user: ALICE, text: 'slow q', threadTs: parent.ts }), {
          botUserId: emu.botUserId,
        }),
      );
      await held.arrived;
      const fragment = emu.botMessages(DM, parent.ts).find((m) => m.text.startsWith('Answ'));
      expect(fragment?.streaming).toBe(true);
      await waitFor(async () => {
        const row = await db
          .selectFrom('deliveries')
          .select(['status', 'refs'])
          .where('kind', '=', 'reply')
          .executeTakeFirst();
        return row?.status === 'streaming' && row.refs.includes(String(fragment?.ts));
      }, 'the stream recorded');
      await first.kill();
      await waitFor(() => emu.socketCount() === 0, 'the socket closed');

      await start();
      const whole = answerFor('slow q');
      await waitFor(() => emu.botMessages(DM, parent.ts).some((m) => m.text === whole), 'the whole answer');
      await waitFor(async () => {
        const open = await db
          .selectFrom('deliveries')
          .select('id')
          .where('status', 'in', ['pending', 'sending', 'streaming'])
          .execute();
        return open.length === 0;
      }, 'the ledger settled');
      const answers = emu.botMessages(DM, parent.ts).filter((m) => m.text.startsWith('Answ'));
      expect(answers.map((m) => m.ts)).toEqual([fragment?.ts]);
      expect(answers[0]!.text).toBe(whole);
      expect(answers[0]!.streaming).toBe(false);
      // Finished by appending to the stream, not replaced by chat.update.
      expect(answers[0]!.blocks).toBeUndefined();
      expect(emu.calls.filter((c) => c.method === 'chat.update' && c.args.ts === fragment?.ts)).toEqual([]);
    },
    KILL_TEST_TIMEOUT_MS,
  );

  it(
    'killed as a finished tool call goes into the steps message: the restart finishes that task in it, once',
    async () => {
      // One tool call (update_scratchpad: allowed without asking), then the answer.
      llm.setHandler((body) => {
        const last = body.messages.at(-1);
        if (last?.role !== 'tool')
          return { toolCalls: [{ name: 'update_scratchpad', arguments: JSON.stringify({ content: 'noted' }) }] };
        return scriptedModel(body);
      });
      const first = await start();
      const parent = emu.userMessage({ channel: DM, user: ALICE, text: 'thread' });
      const chunkOf = (a: Record<string, any>) => (typeof a.chunks === 'string' ? JSON.parse(a.chunks) : a.chunks);
      // The task's "complete" never reaches Slack from the first process.
      const held = emu.hold('chat.appendStream', {
        match: (a) => a.channel === DM && (chunkOf(a) ?? []).some((c: any) => c.status === 'complete'),
      });
      await emu.deliver(
        'events_api',
        eventCallback(emu.userMessage({ channel: DM, user: ALICE, text: 'steps q', threadTs: parent.ts }), {
          botUserId: emu.botUserId,
        }),
      );
      await held.arrived;
      const steps = emu.botMessages(DM, parent.ts).find((m) => (m.tasks ?? []).length > 0);
      expect(steps?.tasks?.[0]).toMatchObject({ status: 'in_progress' });
      await first.kill();
      await waitFor(() => emu.socketCount() === 0, 'the socket closed');

      await start();
      await waitFor(() => emu.botMessages(DM, parent.ts).some((m) => m.text.startsWith('Answ')), 'the answer');
      await waitFor(async () => {
        const open = await db
          .selectFrom('deliveries')
          .select('id')
          .where('status', 'in', ['pending', 'sending', 'streaming'])
          .execute();
        return open.length === 0;
      }, 'the ledger settled');
      const withTasks = emu.botMessages(DM, parent.ts).filter((m) => (m.tasks ?? []).length > 0);
      expect(withTasks.map((m) => m.ts)).toEqual([steps?.ts]);
      expect(withTasks[0]!.tasks).toHaveLength(1);
      expect(withTasks[0]!.tasks![0]).toMatchObject({ id: 't1', status: 'complete' });
      expect(withTasks[0]!.streaming).toBe(false);
      // No task card message beside it, and one answer.
      expect(
        emu.botMessages(DM, parent.ts).filter((m) => (m.blocks ?? []).some((b) => b.type === 'task_card')),
      ).toEqual([]);
      expect(emu.botMessages(DM, parent.ts).filter((m) => m.text.startsWith('Answ'))).toHaveLength(1);
    },
    KILL_TEST_TIMEOUT_MS,
  );
});
