/** Prometheus metrics of the job service, on the core's registry (served at `GET /metrics`). */
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

/** The metric handles the job service updates. */
export interface JobMetrics {
  /** Occurrences by outcome: started, skipped, and each finished status. */
  occurrences: Counter<'outcome'>;
  /** Seconds from an occurrence's scheduled instant to its run starting. */
  startDelay: Histogram<never>;
  /** Runs going in this process. */
  running: Gauge<never>;
}

/** Register the job metrics on a registry. */
export function createJobMetrics(registry: Registry): JobMetrics {
  return {
    occurrences: new Counter({
      name: 'switchboard_job_occurrences_total',
      help: 'Job occurrences by outcome (started, skipped, done, failed, cancelled, timed_out)',
      labelNames: ['outcome'],
      registers: [registry],
    }),
    startDelay: new Histogram({
      name: 'switchboard_job_start_delay_seconds',
      help: 'From an occurrence being due to its run starting',
      buckets: [0.1, 0.5, 1, 5, 15, 30, 60, 300, 3600],
      registers: [registry],
    }),
    running: new Gauge({
      name: 'switchboard_job_runs_running',
      help: 'Job runs going in this process',
      registers: [registry],
    }),
  };
}
