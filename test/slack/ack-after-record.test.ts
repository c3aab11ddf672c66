/**
 * Slack over HTTP: an event is answered 200 ("taken": Slack never sends it again) only once its
 * message is recorded. A process that cannot record it within Slack's deadline — starved of CPU,
 * or its database slow — answers 503, so Slack retries; a SIGKILL before the recording then loses
 * nothing, and the retry is taken once. The test keeps the recording from finishing by holding a
 * lock on the inbox table (PostgreSQL: a write waiting on a lock there does not block the process).
 */
import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { eventCallback } from '../emulators/slack-payloads.js';
import type { StartedProcess } from '../helpers/child-start.js';
import { ALICE, DM, killBudget, slackHttp, useKillWorld, waitFor } from '../helpers/kill-harness.js';
import { answerFor } from '../helpers/kill-model.js';
import { skipped } from '../helpers/skips.js';
import { postgresOnly } from '../helpers/test-db.js';

/** Ends the test's lock on the inbox (also when the test fails while holding it). */
let releaseLock: () => void = () => undefined;

const onlyPostgres = postgresOnly('the test holds a table lock that only blocks the writer on a server');

const world = useKillWorld(slackHttp, { prefix: 'sb-slack-ack' });
// Registered after the world's hooks, so it runs before them: the lock goes before the database does.
afterEach(() => releaseLock());

/** Slack's POST of `event` to the process's `/slack/events`; `retryNum` marks a retry. */
async function post(p: StartedProcess, event: Record<string, unknown>, retryNum?: number) {
  const port = Number(p.logs.find((l) => l.msg === 'switchboard started')?.port);
  return world().emu.deliver('events_api', event, {
    url: `http://127.0.0.1:${port}/slack/events`,
    ...(retryNum === undefined ? {} : { retryNum }),
  });
}

const message = (text: string) => {
  const { emu } = world();
  return eventCallback(emu.userMessage({ channel: DM, user: ALICE, text, channelType: 'im' }), {
    botUserId: emu.botUserId,
  });
};

const answers = () =>
  world()
    .emu.botMessages(DM)
    .map((m) => m.text)
    .filter((t) => t.startsWith('Answer to'));

describe.skipIf(onlyPostgres !== undefined)(
  `slack events over HTTP: taken only once recorded${skipped(onlyPostgres)}`,
  () => {
    it(
      'a message not recorded by Slack’s deadline is answered 503; after a SIGKILL its retry is taken and answered once',
      async () => {
        const { db, start, expectExactly } = world();
        let proc = await start();
        expect((await post(proc, message('q1'))).status).toBe(200);
        await waitFor(() => answers().includes(answerFor('q1')), 'the first answer');

        // The inbox is locked: the process receives q2 but cannot store it until the lock goes.
        const released = new Promise<void>((resolve) => {
          releaseLock = resolve;
        });
        let locked: () => void = () => undefined;
        const isLocked = new Promise<void>((resolve) => {
          locked = resolve;
        });
        const holder = db.transaction().execute(async (trx) => {
          await sql`LOCK TABLE inbox IN EXCLUSIVE MODE`.execute(trx);
          locked();
          await released;
        });
        await isLocked;
        const q2 = message('q2');
        const first = await post(proc, q2);
        // "Taken" now would be a promise the process cannot keep: it dies before storing q2.
        expect(first.status).toBe(503);
        await proc.kill();
        releaseLock();
        await holder;

        // Slack sends the event again, to the restarted process.
        proc = await start();
        expect((await post(proc, q2, 1)).status).toBe(200);
        await waitFor(() => answers().includes(answerFor('q2')), 'the answer to the retried message');
        // A second retry (Slack's own timing is not ours to know) is taken once all the same.
        expect((await post(proc, q2, 2)).status).toBe(200);
        await expectExactly(answers, [answerFor('q1'), answerFor('q2')]);
      },
      // Two starts; waits: the first answer, the lock taken, the 503 at Slack's deadline, the
      // lock's end, the retried answer, and the final judgement (2).
      killBudget(2, 7),
    );
  },
);
