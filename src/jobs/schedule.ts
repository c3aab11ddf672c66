/**
 * Schedules: a cron expression (5 fields, or 6 with seconds first) or a one-off ISO 8601 time,
 * read in an IANA time zone. Parsing, next occurrences and DST are croner's job; this file only
 * validates input into clear errors and formats durations for people (instants and schedules are
 * formatted in `delivery/job-lines.ts`, where the job list cards are built).
 */
import { Cron } from 'croner';
import { isTimeZone } from '../config.js';
import { formatInstant } from '../delivery/job-lines.js';

/** A validated schedule. */
export type Schedule = { kind: 'cron'; cron: string; timezone: string } | { kind: 'at'; at: number; timezone: string };

/** What a person (or the model) asked for. */
export interface ScheduleInput {
  cron?: string;
  at?: string;
  timezone?: string;
}

/** A schedule with its first occurrence, or why it is refused. */
export type ParsedSchedule = { ok: true; schedule: Schedule; next: number } | { ok: false; error: string };

/** The machine's time zone, used when neither the job nor `jobs.timezone` names one. */
export function machineTimeZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
}

const cache = new Map<string, Cron>();
const CACHE_MAX = 2_000;

/** A parsed cron pattern (cached: 1 000 jobs share a handful of expressions). @throws on a bad pattern. */
function cronOf(pattern: string, timezone: string): Cron {
  const key = `${timezone}\u0000${pattern}`;
  let c = cache.get(key);
  if (!c) {
    // No callback: croner only computes occurrences, it never starts a timer.
    c = new Cron(pattern, { timezone, mode: '5-or-6-parts', paused: true });
    if (cache.size >= CACHE_MAX) cache.delete(cache.keys().next().value as string);
    cache.set(key, c);
  }
  return c;
}

const ISO_LOCAL = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,3})?)?$/;
const ISO_OFFSET = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,3})?)?(?:Z|[+-]\d{2}:?\d{2})$/i;

/** An ISO 8601 time as epoch ms: with an offset as given, without one read in `timezone`. */
export function parseAt(text: string, timezone: string): number | null {
  const t = text.trim();
  if (ISO_OFFSET.test(t)) {
    const ms = Date.parse(t.replace(' ', 'T'));
    return Number.isNaN(ms) ? null : ms;
  }
  if (!ISO_LOCAL.test(t)) return null;
  try {
    // croner reads a date pattern in the job's zone (a time in a DST gap moves past the gap).
    const next = new Cron(t.replace(' ', 'T'), { timezone, paused: true }).nextRun(new Date(0));
    return next ? next.getTime() : null;
  } catch {
    return null;
  }
}

/**
 * Validate a schedule request at `now`.
 * Errors name what is wrong: both or neither of cron/at, a bad expression, an unknown zone,
 * a time in the past, a cron that never fires.
 */
export function parseSchedule(input: ScheduleInput, defaultTimeZone: string, now: number): ParsedSchedule {
  const timezone = input.timezone?.trim() || defaultTimeZone;
  if (!isTimeZone(timezone))
    return { ok: false, error: `unknown time zone "${timezone}"; use an IANA name such as Europe/Berlin` };
  const cron = input.cron?.trim();
  const at = input.at?.trim();
  if (cron && at) return { ok: false, error: 'give either cron or at, not both' };
  if (!cron && !at) return { ok: false, error: 'give cron (e.g. "0 9 * * 1-5") or at (e.g. "2026-12-01T09:00")' };
  if (cron) {
    let next: Date | null;
    try {
      next = cronOf(cron, timezone).nextRun(new Date(now));
    } catch (err) {
      const reason = (err as Error).message.replace(/^CronPattern: /, '');
      return { ok: false, error: `bad cron expression "${cron}": ${reason} (5 fields, or 6 with seconds first)` };
    }
    if (!next) return { ok: false, error: `cron expression "${cron}" never fires` };
    return { ok: true, schedule: { kind: 'cron', cron, timezone }, next: next.getTime() };
  }
  const instant = parseAt(at as string, timezone);
  if (instant === null)
    return { ok: false, error: `bad time "${at}": use ISO 8601 such as 2026-12-01T09:00 or 2026-12-01T09:00+01:00` };
  if (instant <= now) return { ok: false, error: `${formatInstant(instant, timezone)} is in the past` };
  return { ok: true, schedule: { kind: 'at', at: instant, timezone }, next: instant };
}

/** The schedule of a stored job. */
export function scheduleOf(job: { cron: string | null; run_at: number | null; timezone: string }): Schedule {
  if (job.cron) return { kind: 'cron', cron: job.cron, timezone: job.timezone };
  return { kind: 'at', at: job.run_at ?? 0, timezone: job.timezone };
}

/** The first occurrence strictly after `after`; null when there is none (a one-off that passed). */
export function nextOccurrence(schedule: Schedule, after: number): number | null {
  if (schedule.kind === 'at') return schedule.at > after ? schedule.at : null;
  const next = cronOf(schedule.cron, schedule.timezone).nextRun(new Date(after));
  return next ? next.getTime() : null;
}

/**
 * Occurrences in `[from, to]`, counted up to `cap` (a seconds cron over a long downtime would
 * otherwise count for a long time).
 */
export function countOccurrences(schedule: Schedule, from: number, to: number, cap = 1_000): number {
  if (from > to) return 0;
  if (schedule.kind === 'at') return schedule.at >= from && schedule.at <= to ? 1 : 0;
  let n = 0;
  let t: number | null = from - 1;
  while (n < cap) {
    t = nextOccurrence(schedule, t);
    if (t === null || t > to) break;
    n++;
  }
  return n;
}

/** `2 h 5 min`, `45 s`: a duration for people. */
export function formatDuration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min`;
  const h = Math.floor(m / 60);
  if (h < 48) return m % 60 ? `${h} h ${m % 60} min` : `${h} h`;
  const d = Math.floor(h / 24);
  return h % 24 ? `${d} d ${h % 24} h` : `${d} d`;
}
