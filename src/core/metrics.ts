/** Prometheus metrics of the core, served at `GET /metrics`. */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** The metric handles the engine updates. */
export interface CoreMetrics {
  registry: Registry;
  turns: Counter<'status'>;
  toolCalls: Counter<'tool' | 'status'>;
  modelRounds: Counter<'outcome'>;
  modelLatency: Histogram<never>;
  pendingApprovals: Gauge<never>;
  /** Per message, from receipt to each stage (see `latency.ts`), labelled by `stage`. */
  messageLatency: Histogram<'stage'>;
}

/** A fresh registry per core, so tests with several cores do not collide. */
export function createMetrics(): CoreMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'switchboard_' });
  return {
    registry,
    turns: new Counter({ name: 'switchboard_turns_total', help: 'Finished turns by status', labelNames: ['status'], registers: [registry] }),
    toolCalls: new Counter({
      name: 'switchboard_tool_calls_total',
      help: 'Finished tool calls by tool and status',
      labelNames: ['tool', 'status'],
      registers: [registry],
    }),
    modelRounds: new Counter({ name: 'switchboard_model_rounds_total', help: 'Model rounds by outcome', labelNames: ['outcome'], registers: [registry] }),
    modelLatency: new Histogram({
      name: 'switchboard_model_round_seconds',
      help: 'Duration of one streamed model round',
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60],
      registers: [registry],
    }),
    pendingApprovals: new Gauge({ name: 'switchboard_pending_approvals', help: 'Approvals waiting for a decision', registers: [registry] }),
    messageLatency: new Histogram({
      name: 'switchboard_message_latency_seconds',
      help: 'From a message being received to: the model request sent (model_request), the first byte from the model (model_first_byte), the first text shown (first_shown), the final text shown (final_shown)',
      labelNames: ['stage'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60],
      registers: [registry],
    }),
  };
}
