import { describe, expect, it } from 'vitest';
import { lateNote, planOccurrence } from '../../src/jobs/plan.js';
import { formatInstant } from '../../src/delivery/job-lines.js';
import { countOccurrences, formatDuration, nextOccurrence, parseAt, parseSchedule } from '../../src/jobs/schedule.js';
import type { Job } from '../../src/store/schema.js';

const T = (iso: string) => Date.parse(iso);

function job(over: Partial<Job>): Job {
  return {
    id: 'abcdefgh',
    name: 'n',
    owner_id: 'test:u1',
    report_conversation_id: 'c',
    prompt: 'p',
    cron: null,
    run_at: null,
    timezone: 'UTC',
    state: 'active',
    next_run_at: null,
    run_requested_at: null,
    last_run_at: null,
    last_outcome: null,
    last_detail: null,
    skipped_runs: 0,
    created_at: 0,
    updated_at: 0,
    ...over,
  };
}

describe('parseSchedule', () => {
  const now = T('2026-12-01T10:00:00Z');

  it('reads a 5-field cron in the job time zone', () => {
    const r = parseSchedule({ cron: '0 9 * * 1-5', timezone: 'Europe/Berlin' }, 'UTC', now);
    expect(r).toMatchObject({ ok: true, next: T('2026-12-02T08:00:00Z') });
  });

  it('takes 6 fields with seconds first', () => {
    const r = parseSchedule({ cron: '*/5 * * * * *' }, 'UTC', now);
    expect(r).toMatchObject({ ok: true, next: now + 5_000 });
  });

  it('uses the default zone when none is given', () => {
    const r = parseSchedule({ cron: '0 9 * * *' }, 'America/New_York', now);
    expect(r).toMatchObject({ ok: true, next: T('2026-12-01T14:00:00Z'), schedule: { timezone: 'America/New_York' } });
  });

  it('refuses bad input with a clear error', () => {
    const err = (input: Parameters<typeof parseSchedule>[0]) => {
      const r = parseSchedule(input, 'UTC', now);
      return r.ok ? 'accepted' : r.error;
    };
    expect(err({ cron: '* * * *' })).toMatch(/bad cron expression "\* \* \* \*".*5 fields, or 6/);
    expect(err({ cron: '61 * * * *' })).toMatch(/minute: 61/);
    expect(err({ cron: '0 0 0 * * * 2027' })).toMatch(/bad cron/);
    expect(err({ cron: '0 9 * * *', at: '2026-12-02T09:00' })).toBe('give either cron or at, not both');
    expect(err({})).toMatch(/give cron .* or at/);
    expect(err({ at: '2026-11-30T09:00' })).toBe('2026-11-30 09:00 (UTC) is in the past');
    expect(err({ at: 'tomorrow at nine' })).toMatch(/bad time "tomorrow at nine"/);
    expect(err({ cron: '0 9 * * *', timezone: 'Mars/Olympus' })).toMatch(/unknown time zone "Mars\/Olympus"/);
  });

  it('reads an at time without offset in the zone, with an offset as given', () => {
    expect(parseAt('2026-12-02T09:00', 'Europe/Berlin')).toBe(T('2026-12-02T08:00:00Z'));
    expect(parseAt('2026-12-02T09:00:00+05:00', 'Europe/Berlin')).toBe(T('2026-12-02T04:00:00Z'));
    expect(parseAt('2026-12-02 09:00Z', 'Europe/Berlin')).toBe(T('2026-12-02T09:00:00Z'));
  });
});

describe('occurrences across DST', () => {
  it('a daily 09:00 New York job moves in UTC when the clocks change', () => {
    const s = { kind: 'cron' as const, cron: '0 9 * * *', timezone: 'America/New_York' };
    expect(nextOccurrence(s, T('2026-03-07T15:00:00Z'))).toBe(T('2026-03-08T13:00:00Z'));
    expect(nextOccurrence(s, T('2026-03-06T15:00:00Z'))).toBe(T('2026-03-07T14:00:00Z'));
  });

  it('a fixed time in the spring gap runs once after the gap; in the autumn overlap once', () => {
    const s = { kind: 'cron' as const, cron: '30 2 * * *', timezone: 'Europe/Berlin' };
    // 2026-03-29: 02:00 → 03:00 local. The 02:30 run happens at 03:00 CEST (01:00 UTC).
    expect(nextOccurrence(s, T('2026-03-28T12:00:00Z'))).toBe(T('2026-03-29T01:00:00Z'));
    // 2026-10-25: 02:00-03:00 local happens twice; the job runs once (the first 02:30, CEST).
    expect(countOccurrences(s, T('2026-10-24T22:00:00Z'), T('2026-10-25T04:00:00Z'))).toBe(1);
  });

  it('counts occurrences up to a cap', () => {
    const s = { kind: 'cron' as const, cron: '* * * * * *', timezone: 'UTC' };
    expect(countOccurrences(s, T('2026-12-01T00:00:00Z'), T('2026-12-01T00:00:09Z'))).toBe(10);
    expect(countOccurrences(s, T('2026-12-01T00:00:00Z'), T('2026-12-02T00:00:00Z'), 50)).toBe(50);
  });

  it('formats instants and durations for people', () => {
    expect(formatInstant(T('2026-12-01T08:00:00Z'), 'Europe/Berlin')).toBe('2026-12-01 09:00 (Europe/Berlin)');
    expect(formatInstant(T('2026-12-01T08:00:05Z'), 'UTC')).toBe('2026-12-01 08:00:05 (UTC)');
    expect(formatDuration(45_000)).toBe('45 s');
    expect(formatDuration(125 * 60_000)).toBe('2 h 5 min');
    expect(formatDuration(50 * 3600_000)).toBe('2 d 2 h');
  });
});

describe('planOccurrence (missed-run policy on a fake clock)', () => {
  const hourly = job({ cron: '0 * * * *', next_run_at: T('2026-12-01T08:00:00Z') });
  const policy = { missed: 'run_once' as const, missedGraceMs: 60_000 };

  it('runs an occurrence on time and moves to the next one', () => {
    const now = T('2026-12-01T08:00:00.020Z');
    const p = planOccurrence(
      { job: hourly, kind: 'schedule', at: T('2026-12-01T08:00:00Z') },
      now,
      T('2026-12-01T07:00:00Z'),
      policy,
    );
    expect(p).toMatchObject({
      trigger: 'schedule',
      scheduledAt: T('2026-12-01T08:00:00Z'),
      nextRunAt: T('2026-12-01T09:00:00Z'),
      missed: 0,
    });
    expect(p.skip).toBeUndefined();
    expect(lateNote({ trigger: p.trigger, late_ms: p.lateMs, missed: p.missed })).toBeNull();
  });

  it('run_once: downtime over two occurrences gives one catch-up run that says how late it is', () => {
    const startedAt = T('2026-12-01T09:30:00Z');
    const p = planOccurrence(
      { job: hourly, kind: 'schedule', at: T('2026-12-01T08:00:00Z') },
      startedAt,
      startedAt,
      policy,
    );
    expect(p).toMatchObject({
      trigger: 'catch_up',
      scheduledAt: T('2026-12-01T08:00:00Z'),
      nextRunAt: T('2026-12-01T10:00:00Z'),
      missed: 1,
    });
    expect(p.skip).toBeUndefined();
    expect(lateNote({ trigger: p.trigger, late_ms: p.lateMs, missed: p.missed })).toBe(
      'Late by 1 h 30 min: switchboard was down at the scheduled time; 1 later run folded into this one.',
    );
  });

  it('skip: the missed occurrences are recorded as one skip and nothing runs', () => {
    const startedAt = T('2026-12-01T09:30:00Z');
    const p = planOccurrence({ job: hourly, kind: 'schedule', at: T('2026-12-01T08:00:00Z') }, startedAt, startedAt, {
      ...policy,
      missed: 'skip',
    });
    expect(p.skip).toBe('missed 2 runs while switchboard was down (jobs.missed = skip)');
    expect(p.nextRunAt).toBe(T('2026-12-01T10:00:00Z'));
  });

  it('an occurrence due just before start-up (within the grace) simply runs', () => {
    const startedAt = T('2026-12-01T08:00:30Z');
    const p = planOccurrence({ job: hourly, kind: 'schedule', at: T('2026-12-01T08:00:00Z') }, startedAt, startedAt, {
      ...policy,
      missed: 'skip',
    });
    expect(p.trigger).toBe('schedule');
    expect(p.skip).toBeUndefined();
  });

  it('a scheduler that fell behind folds the past slots into one run', () => {
    const everySecond = job({ cron: '* * * * * *', next_run_at: T('2026-12-01T08:00:00Z') });
    const now = T('2026-12-01T08:00:05.500Z');
    const p = planOccurrence(
      { job: everySecond, kind: 'schedule', at: T('2026-12-01T08:00:00Z') },
      now,
      T('2026-12-01T07:00:00Z'),
      policy,
    );
    expect(p).toMatchObject({ trigger: 'schedule', missed: 5, nextRunAt: T('2026-12-01T08:00:06Z') });
  });

  it('a one-off has no next run; run now keeps the schedule', () => {
    const once = job({ run_at: T('2026-12-01T08:00:00Z'), next_run_at: T('2026-12-01T08:00:00Z') });
    expect(
      planOccurrence(
        { job: once, kind: 'schedule', at: T('2026-12-01T08:00:00Z') },
        T('2026-12-01T08:00:00Z'),
        0,
        policy,
      ).nextRunAt,
    ).toBeNull();
    const manual = planOccurrence(
      { job: hourly, kind: 'request', at: T('2026-12-01T08:10:00Z') },
      T('2026-12-01T08:10:00Z'),
      0,
      policy,
    );
    expect(manual).toMatchObject({ trigger: 'manual', scheduledAt: T('2026-12-01T08:10:00Z') });
  });
});
