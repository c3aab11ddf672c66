/**
 * A platform's own rendering of something (Slack's task cards for tool lines) used while the
 * platform takes it: off by setting, or switched off for the rest of the run the first time the
 * platform refuses it — logged once — with the refused call made again the old way, so nothing a
 * refusal met is lost. Platform-neutral: the channel says what a refusal looks like.
 */
import type { Logger } from 'pino';

/** Options of {@link NativeFallback}. */
export interface NativeFallbackOptions {
  /** The setting: false uses the old way from the start. */
  enabled: boolean;
  log: Logger;
  /** The warning logged once when the platform refuses (says what is used instead). */
  message: string;
  /** The platform's refusal code when `err` means "not supported here", else undefined (rethrown). */
  refusal(err: unknown): string | undefined;
}

/**
 * A {@link NativeFallbackOptions.refusal} from a platform's error codes: `codeOf` reads an error's
 * code (undefined for anything else), and the codes in `refusals` mean "not supported here".
 */
export function refusalCodes(
  codeOf: (err: unknown) => string | undefined,
  refusals: ReadonlySet<string>,
): (err: unknown) => string | undefined {
  return (err) => {
    const code = codeOf(err);
    return code !== undefined && refusals.has(code) ? code : undefined;
  };
}

/** A native way with a once-for-the-run fallback. */
export class NativeFallback {
  /** The platform's refusal that switched the native way off, once it refused. */
  refused: string | null = null;

  constructor(private readonly options: NativeFallbackOptions) {}

  /** Whether the native way is used now (enabled and never refused this run). */
  get inForce(): boolean {
    return this.options.enabled && this.refused === null;
  }

  /**
   * Make a call the native way when `wanted` and in force, else the old way; a call refused as
   * unsupported switches the native way off and is made again the old way.
   * @param call makes the call; `native` says which way.
   */
  async run<T>(wanted: boolean, call: (native: boolean) => Promise<T>): Promise<T> {
    if (!wanted || !this.inForce) return call(false);
    try {
      return await call(true);
    } catch (err) {
      const code = this.options.refusal(err);
      if (code === undefined) throw err;
      if (this.refused === null) {
        this.refused = code;
        this.options.log.warn({ error: code }, this.options.message);
      }
      return call(false);
    }
  }
}
