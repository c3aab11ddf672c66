/**
 * A platform's webhook route on the shared server, in the order every platform needs: POST only
 * with the body cap (`webhookBody`), the platform's own checks (authenticity, a malformed body, a
 * handshake answered at once), then the start gate — a request that comes in while the channel
 * starts waits for it, one that comes in after it stopped (or outwaits the start) is answered 503
 * so the platform sends it again — and only then the platform's handling.
 */
import type http from 'node:http';
import type { Logger } from 'pino';
import type { HttpServer } from '../http/server.js';
import { answerUnavailable, StartGate, webhookBody } from '../http/webhook.js';

/** Longest body a webhook takes unless told otherwise: 1 MiB (platforms post small JSON or forms). */
export const WEBHOOK_BODY_LIMIT = 1024 * 1024;

/** Options of {@link WebhookRoute}; `T` is what the platform's checks hand to its handling. */
export interface WebhookRouteOptions<T extends object> {
  http: HttpServer;
  /** The route's path on the shared server. */
  path: string;
  /** Longest body, bytes, default {@link WEBHOOK_BODY_LIMIT}; a longer one is answered 413. */
  bodyLimit?: number;
  /** Longest a request that came in while the channel starts waits for it, ms, counted from its arrival. */
  startHoldMs: number;
  /** The channel's logger (it names the channel). */
  log: Logger;
  /**
   * The platform's checks before the gate. Returns what `handle` needs, or nothing when it answered
   * the request itself (refused it, or a handshake that needs no running channel).
   */
  // biome-ignore lint/suspicious/noConfusingVoidType: a check ends with `return answerPlain(…)` or an SDK's answer, typed void.
  accept(req: http.IncomingMessage, res: http.ServerResponse, raw: string): T | void | Promise<T | void>;
  /** Handle an admitted request; `arrived` is when it came in (the platform's deadlines count from it). */
  handle(accepted: T, res: http.ServerResponse, arrived: number): Promise<void>;
}

/** A webhook route whose requests are handled once its channel runs; {@link open} at start, {@link close} at stop. */
export class WebhookRoute<T extends object> {
  private readonly gate: StartGate;

  constructor(private readonly options: WebhookRouteOptions<T>) {
    this.gate = new StartGate(options.startHoldMs);
    options.http.route(options.path, (req, res) => this.serve(req, res));
  }

  /** The channel runs: held and new requests are handled. */
  open(): void {
    this.gate.open();
  }

  /** The channel stops: held and new requests are answered 503. */
  close(): void {
    this.gate.close();
  }

  private async serve(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const { log } = this.options;
    const arrived = Date.now();
    const raw = await webhookBody(req, res, this.options.bodyLimit ?? WEBHOOK_BODY_LIMIT, log);
    if (raw === undefined) return;
    const accepted = await this.options.accept(req, res, raw);
    if (!accepted) return;
    if (!(await this.gate.admit(arrived))) {
      log.warn(
        { path: this.options.path, heldMs: Date.now() - arrived, stopping: this.gate.isStopped },
        'webhook: request came in before the channel ran; answered 503 so it is sent again',
      );
      return answerUnavailable(res, 'starting or stopping');
    }
    await this.options.handle(accepted, res, arrived);
  }
}
