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
