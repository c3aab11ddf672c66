import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { claimOccurrence, getJob, insertJob } from '../../src/store/repos/jobs.js';
import { formatDuration } from '../../src/jobs/schedule.js';
import { startHarness, waitFor, type Harness } from '../helpers/harness.js';
import { jobRows, jobsOf, route, runRows } from './helpers.js';

let h: Harness;
afterEach(async () => {
  await h?.close();
});

/**
 * The job runs hourly: a test takes seconds, so the next regular occurrence almost never falls
 * inside one (with a job every minute, a slow machine saw it run during the assertions).
 */
const PERIOD = 3_600_000;

/**
 * How many hour boundaries passed between `hour` and the moment the scheduler acted on the
 * occurrence (its `scheduled_at + late_ms`): 0, or 1 when the wall clock's hour turned during
 * set-up. The expectations below follow from it instead of waiting for a quiet moment.
 */
const turned = (hour: number, run: { scheduled_at: number; late_ms: number }) =>
  (Math.floor((Number(run.scheduled_at) + Number(run.late_ms)) / PERIOD) * PERIOD - hour) / PERIOD;

/** An hourly job whose next run is two hours back, as after downtime over two occurrences. */
async function jobMissedWhileDown(policy: 'run_once' | 'skip') {
  h = await startHarness({ overrides: { jobs: { missed: policy } } });
  route(
    h.llm,
    () => ({ text: 'hello' }),
    () => ({ text: 'caught up' }),
  );
  const conv = ((await h.send('hi')) as { conversationId: string }).conversationId;
  await h.core.idle();
  const hour = Math.floor(Date.now() / PERIOD) * PERIOD;
  await insertJob(h.core.db, {
    id: 'missed01',
    name: 'hourly',
    owner_id: 'test:u1',
    report_conversation_id: conv,
    prompt: 'report',
    cron: '0 * * * *',
    run_at: null,
    timezone: 'UTC',
    next_run_at: hour + PERIOD,
  });
  await h.core.db
    .updateTable('jobs')
    .set({ next_run_at: hour - 2 * PERIOD })
    .where('id', '=', 'missed01')
    .execute();
  await h.restart();
  return { conv, hour };
}

describe('occurrences missed while switchboard was down', () => {
  it('run_once: one catch-up run, marked late, then back on schedule', async () => {
    const { conv, hour } = await jobMissedWhileDown('run_once');
    const note = await waitFor(() => h.channel.eventsOf('notification', conv)[0], 'the catch-up report');
    await h.core.idle();
    const runs = await runRows(h, 'missed01');
    expect(runs).toHaveLength(1); // one catch-up run: a second would be a second row
    const k = turned(hour, runs[0] as { scheduled_at: number; late_ms: number });
    expect([0, 1]).toContain(k);
    const late = Number(runs[0]?.late_ms);
    expect(late).toBeGreaterThanOrEqual(2 * PERIOD + k * PERIOD);
    expect(note.text).toBe(
      `_Late by ${formatDuration(late)}: switchboard was down at the scheduled time; ${2 + k} later runs folded into this one._\n\ncaught up`,
    );
    expect(h.channel.eventsOf('notification', conv)).toHaveLength(1);
    expect(runs).toMatchObject([
      { scheduled_at: hour - 2 * PERIOD, trigger: 'catch_up', status: 'done', missed: 2 + k },
    ]);
    expect((await jobRows(h))[0]?.next_run_at).toBe(hour + PERIOD * (1 + k));
  });

  it('skip: no run; the skip is recorded and counted', async () => {
    const { conv, hour } = await jobMissedWhileDown('skip');
    await waitFor(async () => (await runRows(h, 'missed01')).length > 0, 'the skip record');
    await h.core.idle();
    expect(h.channel.eventsOf('notification', conv)).toHaveLength(0);
    const runs = await runRows(h, 'missed01');
    const k = turned(hour, runs[0] as { scheduled_at: number; late_ms: number });
    expect([0, 1]).toContain(k);
    expect(runs).toMatchObject([
      { status: 'skipped', detail: `missed ${3 + k} runs while switchboard was down (jobs.missed = skip)` },
    ]);
    expect((await jobRows(h))[0]).toMatchObject({
      next_run_at: hour + PERIOD * (1 + k),
      skipped_runs: 1,
      last_outcome: 'skipped',
    });
    expect(h.llm.chatRequests()).toHaveLength(1);
  });
});

describe('a process that does not serve the reporting chat', () => {
  it('neither claims the job nor takes over its unfinished run; the serving process does', async () => {
    const { RecordingChannel } = await import('../helpers/recording-channel.js');
    const { startScriptedLlm } = await import('../emulators/llm.js');
    const llm = await startScriptedLlm();
    const dir = mkdtempSync(path.join(os.tmpdir(), 'switchboard-elsewhere-'));
    try {
      const first = await startHarness({ dir, llm });
      route(
        llm,
        () => ({ text: 'hello' }),
        () => ({ text: 'ran where it belongs' }),
      );
      const conv = ((await first.send('hi')) as { conversationId: string }).conversationId;
      await first.core.idle();
      await insertJob(first.core.db, {
        id: 'elsewhere',
        name: 'elsewhere',
        owner_id: 'test:u1',
        report_conversation_id: conv,
        prompt: 'p',
        cron: null,
        run_at: Date.now() + 60_000,
        timezone: 'UTC',
        next_run_at: Date.now() + 60_000,
      });
      await first.close();
      // A second "process" that serves only another channel: the job is due, but not for it.
      const other = await startHarness({ dir, llm, channels: () => [new RecordingChannel('other')] });
      // Its scheduler asleep after its first pass, the job is made due and the scheduler woken: the
      // pass after the wake has seen the due job and left it.
      const scheduler = jobsOf(other.core);
      await waitFor(() => scheduler.sleeps.length > 0, 'the first scheduler pass');
      await other.core.db.updateTable('jobs').set({ next_run_at: Date.now() }).execute();
      const passes = scheduler.sleeps.length;
      scheduler.wake();
      await waitFor(() => scheduler.sleeps.length > passes, 'a scheduler pass after the wake');
      expect(await runRows(other, 'elsewhere')).toEqual([]);
      // The serving process claimed the occurrence and died before running it.
      const job = (await getJob(other.core.db, 'elsewhere'))!;
      const due = Number(job.next_run_at);
      expect(
        await claimOccurrence(other.core.db, {
          due: { job, kind: 'schedule', at: due },
          scheduledAt: due,
          trigger: 'schedule',
          nextRunAt: null,
          lateMs: 0,
          missed: 0,
          claimedBy: 'dead',
          now: Date.now(),
          message: '[Scheduled job “elsewhere” (elsewhere)]\n\np',
        }),
      ).toBe('claimed');
      await other.close();
      const again = await startHarness({ dir, llm, channels: () => [new RecordingChannel('other')] });
      // Recovery ran in the start; left are the scheduler's first pass and a sweep (which takes
      // over runs nobody holds).
      await waitFor(() => jobsOf(again.core).sleeps.length > 0, 'the first scheduler pass');
      await again.core.sweep();
      expect(
        await again.core.db.selectFrom('turns').select('id').where('conversation_id', '=', 'job:elsewhere').execute(),
      ).toEqual([]);
      expect(jobsOf(again.core).running).toBe(0);
      await again.close();
      h = await startHarness({ dir, llm });
      const note = await waitFor(
        () => h.channel.eventsOf('notification', conv)[0],
        'the report from the serving process',
      );
      expect(note.text).toBe('ran where it belongs');
      expect(await runRows(h, 'elsewhere')).toMatchObject([{ status: 'done', claimed_by: 'dead' }]);
    } finally {
      await h?.close();
      await llm.close();
      rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
    }
  });
});
