/**
 * Prometheus metrics of the core, served at `GET /metrics`. At the root of `src/`, below every
 * folder, because both the core and the presenter (`src/delivery/`) count into them.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** The metric handles the engine updates. */
export interface CoreMetrics {
  registry: Registry;
  turns: Counter<'status'>;
  toolCalls: Counter<'tool' | 'status'>;
  modelRounds: Counter<'outcome'>;
  modelLatency: Histogram<never>;
  /** Tokens the model endpoint reported, by `kind` (`prompt`, `completion`) and `model`. */
  tokens: Counter<'kind' | 'model'>;
  pendingApprovals: Gauge<never>;
  /**
   * Work claimed by this instance, by kind: `conv` (a conversation's turns), `telegram-poller`,
   * `delivery` (a ledger row being sent), `job` (a job occurrence).
   */
  leaseClaims: Counter<'kind'>;
  /** Claims that took a lease from an instance that had stopped renewing it. */
  leaseTakeovers: Counter<'kind'>;
  /** Leases this instance lost to another while still working under them. */
  leaseLosses: Counter<'kind'>;
  /** Per message, from receipt to each stage (see `latency.ts`), labelled by `stage`. */
  messageLatency: Histogram<'stage'>;
  /** Delivery rows by status, read from the ledger at scrape time (see {@link bindDeliveryCounts}). */
  deliveries: Gauge<'status'>;
  /** Delivery outcomes: delivered, retried, failed, abandoned. */
  deliveryOutcomes: Counter<'kind' | 'outcome'>;
  /** From a row's creation to the platform accepting it. */
  deliveryLatency: Histogram<never>;
  /** Where the deliveries gauge reads its counts. */
  bindDeliveryCounts(read: () => Promise<Record<string, number>>): void;
}

/** A fresh registry per core, so tests with several cores do not collide. */
export function createMetrics(): CoreMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'switchboard_' });
  let readCounts: (() => Promise<Record<string, number>>) | null = null;
  const deliveries = new Gauge({
    name: 'switchboard_deliveries',
    help: 'Delivery ledger rows by status (streaming, pending, sending, delivered, failed, abandoned)',
    labelNames: ['status'],
    registers: [registry],
    async collect() {
      if (!readCounts) return;
      try {
        const counts = await readCounts();
        for (const [status, n] of Object.entries(counts)) this.set({ status }, n);
      } catch {
        // The database is closed (shutdown): keep the last values.
      }
    },
  });
  return {
    registry,
    deliveries,
    deliveryOutcomes: new Counter({
      name: 'switchboard_delivery_outcomes_total',
      help: 'Delivery attempts by kind and outcome (delivered, retried, failed, abandoned)',
      labelNames: ['kind', 'outcome'],
      registers: [registry],
    }),
    deliveryLatency: new Histogram({
      name: 'switchboard_delivery_latency_seconds',
      help: 'From a delivery row being written to the platform accepting it',
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 300, 3600],
      registers: [registry],
    }),
    bindDeliveryCounts(read) {
      readCounts = read;
    },
    turns: new Counter({
      name: 'switchboard_turns_total',
      help: 'Finished turns by status',
      labelNames: ['status'],
      registers: [registry],
    }),
    toolCalls: new Counter({
      name: 'switchboard_tool_calls_total',
      help: 'Finished tool calls by tool and status',
      labelNames: ['tool', 'status'],
      registers: [registry],
    }),
    modelRounds: new Counter({
      name: 'switchboard_model_rounds_total',
      help: 'Model rounds by outcome',
      labelNames: ['outcome'],
      registers: [registry],
    }),
    modelLatency: new Histogram({
      name: 'switchboard_model_round_seconds',
      help: 'Duration of one streamed model round',
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60],
      registers: [registry],
    }),
    tokens: new Counter({
      name: 'switchboard_tokens_total',
      help: 'Tokens the model endpoint reported as used, by kind (prompt, completion) and model',
      labelNames: ['kind', 'model'],
      registers: [registry],
    }),
    pendingApprovals: new Gauge({
      name: 'switchboard_pending_approvals',
      help: 'Approvals waiting for a decision',
      registers: [registry],
    }),
    leaseClaims: new Counter({
      name: 'switchboard_lease_claims_total',
      help: 'Leases claimed by this instance, by kind',
      labelNames: ['kind'],
      registers: [registry],
    }),
    leaseTakeovers: new Counter({
      name: 'switchboard_lease_takeovers_total',
      help: 'Leases taken over from an instance that stopped renewing them, by kind',
      labelNames: ['kind'],
      registers: [registry],
    }),
    leaseLosses: new Counter({
      name: 'switchboard_lease_losses_total',
      help: 'Leases lost to another instance while working under them, by kind',
      labelNames: ['kind'],
      registers: [registry],
    }),
    messageLatency: new Histogram({
      name: 'switchboard_message_latency_seconds',
      help:
        'From a message being received to: the model request sent (model_request), the first byte from the ' +
        'model (model_first_byte), the first text shown (first_shown), the final text shown (final_shown)',
      labelNames: ['stage'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60],
      registers: [registry],
    }),
  };
}
