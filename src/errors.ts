/**
 * Base error for switchboard: a stable string `code` for callers and tests, and the cause kept.
 * Each layer subclasses it (ConfigError, StoreError, LlmError, ToolError, ...).
 */
export class SwitchboardError extends Error {
  /** Stable machine-readable code, e.g. `config_invalid`, `llm_unreachable`. */
  readonly code: string;

  constructor(code: string, message: string, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = new.target.name;
    this.code = code;
  }
}

/** Message of any thrown value, for text shown to users and models. */
export function errorMessage(err: unknown): string {
  if (err instanceof Error) return err.message;
  return String(err);
}

/** Network error codes in words, for messages that say why a host could not be reached. */
const NETWORK_CAUSES: Record<string, string> = {
  ECONNREFUSED: 'connection refused (nothing listens on that port)',
  ENOTFOUND: 'host name not found (DNS)',
  EAI_AGAIN: 'host name lookup failed (DNS or no network)',
  ETIMEDOUT: 'connection timed out',
  ECONNRESET: 'connection reset by the other side',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  EPIPE: 'connection closed while sending',
  UND_ERR_CONNECT_TIMEOUT: 'connection timed out',
  UND_ERR_SOCKET: 'connection closed by the other side',
  CERT_HAS_EXPIRED: 'its TLS certificate has expired',
  DEPTH_ZERO_SELF_SIGNED_CERT: 'its TLS certificate is self-signed',
  SELF_SIGNED_CERT_IN_CHAIN: 'its TLS certificate chain is self-signed',
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'its TLS certificate could not be verified',
  ERR_TLS_CERT_ALTNAME_INVALID: 'its TLS certificate is for another host name',
};

/**
 * Why a request failed, in words: fetch's "fetch failed" hides the reason in `cause` (often
 * nested); this finds the network code there and names it, e.g. "connection refused (nothing
 * listens on that port) (ECONNREFUSED)". A timeout says so; anything else keeps its message.
 */
export function networkCause(err: unknown): string {
  let e: unknown = err;
  for (let depth = 0; depth < 5 && e instanceof Error; depth++) {
    if (e.name === 'TimeoutError' || e.name === 'AbortError') return 'no answer in time (timed out)';
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && NETWORK_CAUSES[code]) return `${NETWORK_CAUSES[code]} (${code})`;
    const errors = (e as { errors?: unknown }).errors; // AggregateError: one per address tried
    if (Array.isArray(errors) && errors[0] instanceof Error) {
      e = errors[0];
      continue;
    }
    if (e.cause === undefined) break;
    e = e.cause;
  }
  return e instanceof Error && e !== err && e.message ? e.message : errorMessage(err);
}
