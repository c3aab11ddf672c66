/**
 * A crash during summarisation loses nothing: `switchboard chat --jsonl` is killed with SIGKILL
 * while the summary request is outstanding; the old turns stay in use (no summary row), and a new
 * process over the same database summarises, commits the row and uses it from then on.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SUMMARISED_NOTICE, SUMMARY_PROMPT } from '../../src/core/compaction.js';
import { openStore } from '../../src/store/db.js';
import { startScriptedLlm, type ScriptedLlm } from '../emulators/llm.js';
import { budget, CHILD_START_MS, LINE_WAIT_MS, times, WAIT_MS } from '../helpers/budgets.js';
import { waitFor } from '../helpers/harness.js';
import { spawnJsonl } from '../helpers/jsonl-process.js';
import { testDatabaseUrl } from '../helpers/test-db.js';

let llm: ScriptedLlm;
let dir: string;
beforeAll(async () => {
  llm = await startScriptedLlm();
  dir = mkdtempSync(path.join(os.tmpdir(), 'sb-compact-crash-'));
  mkdirSync(path.join(dir, 'ws'));
});
afterAll(async () => {
  await llm.close();
  rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
});

/** The messages the first process is sent at most: a code word, then chat until the summary is asked for. */
const TURNS = 9;
const isSummary = (body: any) => body.messages[0]?.content === SUMMARY_PROMPT;

describe('summarisation across a crash', () => {
  it(
    'SIGKILL while the summary is being written: nothing lost; after a restart the summary is committed and used',
    async () => {
      let summariesAllowed = false;
      llm.setHandler((body) => {
        if (isSummary(body)) {
          if (!summariesAllowed) return { hang: true };
          const input = body.messages[1].content as string;
          return { text: input.includes('PINEAPPLE-42') ? 'The code word is PINEAPPLE-42.' : 'Small talk.' };
        }
        return { text: `Sure. ${'We talked about the weather. '.repeat(6)}` };
      });
      const env = {
        DATABASE_URL: testDatabaseUrl(dir),
        SWITCHBOARD_WORKSPACE: path.join(dir, 'ws'),
        OPENAI_BASE_URL: llm.url,
        OPENAI_API_KEY: 'k',
        SWITCHBOARD__LLM__CONTEXT_TOKENS: '500',
      };
      const args = ['--conversation', 'long'];
      const first = spawnJsonl(env, args);
      const texts = [
        'My code word is PINEAPPLE-42.',
        ...Array.from({ length: TURNS - 1 }, (_, i) => `Chat ${i}: ${'weather words again and again. '.repeat(6)}`),
      ];
      let sent = 0;
      for (const text of texts) {
        first.send({ type: 'message', text });
        sent++;
        // Stop once the summary request is outstanding (the turn waits on it).
        const outcome = await waitFor(
          () =>
            first.lines.filter((l) => l.type === 'turn_done').length === sent
              ? 'done'
              : llm.chatRequests().some((r) => isSummary(r.body))
                ? 'summarising'
                : null,
          `turn ${sent}`,
          // The first turn includes the process's start (to its first line): a start-up's wait; the
          // others are steps of a ready child.
          sent === 1 ? CHILD_START_MS : LINE_WAIT_MS,
        );
        if (outcome === 'summarising') break;
      }
      expect(llm.chatRequests().some((r) => isSummary(r.body))).toBe(true);
      first.child.kill('SIGKILL');
      await first.exited;

      const db = openStore({ database_url: env.DATABASE_URL, pool_size: 1 });
      try {
        expect(await db.selectFrom('summaries').selectAll().execute()).toEqual([]);
        const users = await db
          .selectFrom('messages')
          .select('content')
          .where('role', '=', 'user')
          .orderBy('id')
          .execute();
        expect(users.map((u) => u.content)).toEqual(texts.slice(0, sent));

        summariesAllowed = true;
        const before = llm.chatRequests().length;
        const second = spawnJsonl(env, args);
        const done = await second.waitForLine(
          (l) => l.type === 'turn_done',
          'the interrupted turn done after restart',
          CHILD_START_MS, // it includes the new process's start
        );
        expect(done.status).toBe('done');
        expect(second.lines.some((l) => l.type === 'notification' && l.text === SUMMARISED_NOTICE)).toBe(true);
        const rows = await db.selectFrom('summaries').selectAll().execute();
        expect(rows).toHaveLength(1);
        expect(rows[0]?.content).toContain('PINEAPPLE-42');
        const after = llm
          .chatRequests()
          .slice(before)
          .map((r) => r.body)
          .filter((b) => !isSummary(b));
        expect(after[0].messages[0].content).toContain('PINEAPPLE-42');
        // The summary is used from then on, without being written again.
        second.send({ type: 'message', text: 'What was my code word?' });
        await second.waitForLine(
          (l) => l.type === 'turn_done' && second.lines.filter((x) => x.type === 'turn_done').length === 2,
          'next turn',
        );
        const last = llm.chatRequests().at(-1)?.body;
        expect(isSummary(last)).toBe(false);
        expect(last.messages[0].content).toContain('PINEAPPLE-42');
        expect(await db.selectFrom('summaries').selectAll().execute()).toHaveLength(1);
        const all = await db.selectFrom('messages').select('content').where('role', '=', 'user').execute();
        expect(all).toHaveLength(sent + 1);
        expect(await second.stop()).toBe(0);
      } finally {
        await db.destroy();
      }
      // The sum of its waits: two process starts (each with the turn it waits for), eight more turns
      // of the first process at most, the next turn and the clean stop.
    },
    budget(CHILD_START_MS, ...times(TURNS - 1, LINE_WAIT_MS), CHILD_START_MS, LINE_WAIT_MS, WAIT_MS),
  );
});
