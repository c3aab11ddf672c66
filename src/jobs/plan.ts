/**
 * What to do with one due occurrence — run it, fold missed ones into one catch-up run, or skip
 * it — and where the job's schedule goes next. Pure: the scheduler passes the clock in, so the
 * policy is tested on a fake clock.
 */
import type { ClaimRequest, DueOccurrence } from '../store/repos/jobs.js';
import { countOccurrences, formatDuration, nextOccurrence, scheduleOf } from './schedule.js';

/** The parts of `[jobs]` the plan reads. */
export interface PlanPolicy {
  missed: 'run_once' | 'skip';
  /** An occurrence due this long before the scheduler started counts as missed. */
  missedGraceMs: number;
}

/** A claim request without the process-specific fields. */
export type Plan = Omit<ClaimRequest, 'claimedBy' | 'message' | 'due'>;

/**
 * Plan one due occurrence at `now`, for a scheduler that started at `startedAt`.
 *
 * - A run-now request runs as a manual occurrence keyed by the request time; the schedule stays.
 * - An occurrence due before start-up (minus the grace) was missed while switchboard was down:
 *   `run_once` runs it once, late, folding every later missed one into it; `skip` records a skip.
 *   Either way the schedule continues with the first occurrence after `now`.
 * - Otherwise it runs; if the scheduler fell behind (the following occurrence is already past),
 *   the past ones are folded into this run instead of queuing one run per slot.
 */
export function planOccurrence(due: DueOccurrence, now: number, startedAt: number, policy: PlanPolicy): Plan {
  if (due.kind === 'request') {
    return { scheduledAt: due.at, trigger: 'manual', nextRunAt: null, lateMs: 0, missed: 0, now };
  }
  const schedule = scheduleOf(due.job);
  const scheduled = due.at;
  if (scheduled < startedAt - policy.missedGraceMs) {
    const missed = countOccurrences(schedule, scheduled, now);
    const nextRunAt = nextOccurrence(schedule, now);
    if (policy.missed === 'skip') {
      const what = missed === 1 ? 'one run' : `${missed >= 1000 ? '1000+' : missed} runs`;
      return {
        scheduledAt: scheduled,
        trigger: 'catch_up',
        nextRunAt,
        lateMs: now - scheduled,
        missed,
        now,
        skip: `missed ${what} while switchboard was down (jobs.missed = skip)`,
      };
    }
    return {
      scheduledAt: scheduled,
      trigger: 'catch_up',
      nextRunAt,
      lateMs: now - scheduled,
      missed: Math.max(0, missed - 1),
      now,
    };
  }
  let nextRunAt = nextOccurrence(schedule, scheduled);
  let folded = 0;
  if (nextRunAt !== null && nextRunAt <= now) {
    folded = countOccurrences(schedule, nextRunAt, now);
    nextRunAt = nextOccurrence(schedule, now);
  }
  return {
    scheduledAt: scheduled,
    trigger: 'schedule',
    nextRunAt,
    lateMs: Math.max(0, now - scheduled),
    missed: folded,
    now,
  };
}

/** Runs that start later than this are called late in their messages. */
export const LATE_NOTICE_MS = 60_000;

/** One line saying how late a run is and why, or null for a run on time. */
export function lateNote(run: { trigger: string; late_ms: number; missed: number }): string | null {
  if (run.trigger === 'manual') return null;
  const folded =
    run.missed > 0
      ? `; ${run.missed >= 1000 ? '1000+' : run.missed} later run${run.missed === 1 ? '' : 's'} folded into this one`
      : '';
  if (run.trigger === 'catch_up')
    return `Late by ${formatDuration(run.late_ms)}: switchboard was down at the scheduled time${folded}.`;
  if (run.late_ms >= LATE_NOTICE_MS || run.missed > 0) return `Late by ${formatDuration(run.late_ms)}${folded}.`;
  return null;
}
