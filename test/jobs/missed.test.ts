import { afterEach, describe, expect, it } from 'vitest';
import { insertJob } from '../../src/store/repos/jobs.js';
import { startHarness, waitFor, type Harness } from '../helpers/harness.js';
import { jobRows, route, runRows } from './helpers.js';

let h: Harness;
afterEach(async () => {
  await h?.close();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A job every minute whose next run is two minutes back, as after downtime over two occurrences. */
async function jobMissedWhileDown(policy: 'run_once' | 'skip') {
  // Counts below assume the minute does not turn during set-up.
  while (Date.now() % 60_000 > 56_000) await sleep(250);
  h = await startHarness({ overrides: { jobs: { missed: policy } } });
  route(h.llm, () => ({ text: 'hello' }), () => ({ text: 'caught up' }));
  const conv = ((await h.send('hi')) as { conversationId: string }).conversationId;
  await h.core.idle();
  const minute = Math.floor(Date.now() / 60_000) * 60_000;
  await insertJob(h.core.db, {
    id: 'missed01', name: 'minutely', owner_id: 'test:u1', report_conversation_id: conv, prompt: 'report',
    cron: '* * * * *', run_at: null, timezone: 'UTC', next_run_at: minute + 3_600_000,
  });
  await h.core.db.updateTable('jobs').set({ next_run_at: minute - 120_000 }).where('id', '=', 'missed01').execute();
  await h.restart();
  return { conv, minute };
}

describe('occurrences missed while switchboard was down', () => {
  it('run_once: one catch-up run, marked late, then back on schedule', async () => {
    const { conv, minute } = await jobMissedWhileDown('run_once');
    const note = await waitFor(() => h.channel.eventsOf('notification', conv)[0], 'the catch-up report');
    expect(note.text).toMatch(/^_Late by 2 min: switchboard was down at the scheduled time; 2 later runs folded into this one\._\n\ncaught up$/);
    await sleep(300);
    await h.core.idle();
    expect(h.channel.eventsOf('notification', conv)).toHaveLength(1);
    expect(await runRows(h, 'missed01')).toMatchObject([{ scheduled_at: minute - 120_000, trigger: 'catch_up', status: 'done', missed: 2 }]);
    expect((await jobRows(h))[0]?.next_run_at).toBe(minute + 60_000);
  });

  it('skip: no run; the skip is recorded and counted', async () => {
    const { conv, minute } = await jobMissedWhileDown('skip');
    await waitFor(async () => (await runRows(h, 'missed01')).length > 0, 'the skip record');
    await sleep(300);
    await h.core.idle();
    expect(h.channel.eventsOf('notification', conv)).toHaveLength(0);
    expect(await runRows(h, 'missed01')).toMatchObject([{ status: 'skipped', detail: 'missed 3 runs while switchboard was down (jobs.missed = skip)' }]);
    expect((await jobRows(h))[0]).toMatchObject({ next_run_at: minute + 60_000, skipped_runs: 1, last_outcome: 'skipped' });
    expect(h.llm.chatRequests()).toHaveLength(1);
  });
});
