/**
 * What a section of the configuration declares about itself: its name (`[telegram]`), its zod
 * schema (with a `.describe()` text on every key, from which `config/switchboard.example.toml` and
 * `docs/configuration.md` are generated), its short environment names and its cross-field checks.
 * Also the value schemas the sections share (lists, booleans, numbers from the environment, URLs).
 *
 * A channel's `src/channels/<name>/config.ts` imports nothing but zod and this file, so the
 * configuration (the lowest layer) can compose the channels' sections without importing a channel
 * (`config-sections.ts`; the rule `channel-config-is-plain` in `.dependency-cruiser.cjs`).
 */
import { z } from 'zod';

/**
 * Extra metadata a key may carry besides its `.describe()` text (set with `.meta({...})`):
 * - `example`: a TOML value shown as a commented-out line (`# key = example`) — for a key
 *   without a default, or one whose default (`{}`) says little;
 * - `sample`: TOML lines shown commented out instead of the key's line (tables of examples,
 *   e.g. `[[approvals.rules]]`); only for the last keys of a table;
 * - `type`: the type as the reference names it, where the schema's own would mislead.
 */
export interface KeyMeta {
  example?: string;
  sample?: string;
  type?: string;
}

/** One section of the configuration (`[name]` in TOML). */
export interface ConfigSection<N extends string = string, S extends z.ZodObject = z.ZodObject> {
  /** The table name, also the first part of every dotted key and generic env name. */
  readonly name: N;
  /** The keys; `.describe()` on the object is the section's introduction in the generated files. */
  readonly schema: S;
  /**
   * Short environment names → the key they set within this section (`TELEGRAM_BOT_TOKEN:
   * 'bot_token'`). Every key also has its generic `SWITCHBOARD__<SECTION>__<KEY>` name.
   */
  readonly env?: Readonly<Record<string, string>>;
  /**
   * Problems no single key shows (a key that needs another): one `config: …` line each. Run on the
   * validated section after the whole configuration parsed.
   */
  check?(section: z.output<S>): string[];
}

/** Declare a section, keeping its name and schema types (for the composed `Config` type). */
export function configSection<const N extends string, S extends z.ZodObject>(
  section: ConfigSection<N, S>,
): ConfigSection<N, S> {
  return section;
}

/** Strings as a list: a TOML array, or one comma-separated string (an environment variable). */
export const csv = z
  .union([z.array(z.union([z.string(), z.number()])), z.string()])
  .transform((v) => {
    const items = Array.isArray(v) ? v.map(String) : v.split(',');
    return items.map((s) => s.trim()).filter((s) => s.length > 0);
  })
  .meta({ type: 'list of strings' });

/**
 * A platform's user ids, which are numbers (Telegram's, Discord's): the bot sees only those, so a
 * name or an @handle here would let nobody in without a word; it is refused when the
 * configuration is loaded instead. `note` says more in the error (in parentheses).
 */
export const numericUserIds = (platform: string, note?: string) =>
  csv
    .pipe(
      z.array(
        z.string().regex(/^\d+$/, {
          error: (issue) => `"${String(issue.input)}" is not a numeric ${platform} user id${note ? ` (${note})` : ''}`,
        }),
      ),
    )
    .meta({ type: 'list of numeric user ids' });

/** Booleans; environment variables (strings) may say true/false/1/0/yes/no. */
export const boolish = z
  .union([z.boolean(), z.enum(['true', 'false', '1', '0', 'yes', 'no'])])
  .transform((v) => {
    if (typeof v === 'boolean') return v;
    return v === 'true' || v === '1' || v === 'yes';
  })
  .meta({ type: 'boolean' });

/**
 * A number. Only a numeric string (an environment variable) is converted; `true`, `""` and other
 * non-numbers are refused rather than coerced to 1 or 0.
 */
export function numeric<T extends z.ZodNumber>(inner: T, type = 'number') {
  return z
    .preprocess((v) => (typeof v === 'string' && /^\s*-?\d+(\.\d+)?\s*$/.test(v) ? Number(v) : v), inner)
    .meta({ type });
}

/** A whole number above zero. */
export const positiveInt = numeric(z.number().int().positive(), 'integer ≥ 1');
/** A whole number, zero or more. */
export const nonNegativeInt = numeric(z.number().int().nonnegative(), 'integer ≥ 0');
/** A whole number from `min` to `max`. */
export const intBetween = (min: number, max: number) =>
  numeric(z.number().int().min(min).max(max), `integer ${min}–${max}`);

/** An absolute http(s) URL; `localhost:11434/v1` (no scheme) is refused with an example. */
export const httpUrl = z
  .string()
  .refine((v) => {
    try {
      const u = new URL(v);
      return (u.protocol === 'http:' || u.protocol === 'https:') && u.hostname !== '';
    } catch {
      return false;
    }
  }, 'expected an http(s) URL such as http://127.0.0.1:11434/v1')
  .meta({ type: 'http(s) URL' });

/**
 * An optional string key (a token, a secret, an id) with its documentation and the TOML value
 * `example` shows commented out (`""` for a secret nobody should copy).
 */
export const optionalText = (description: string, example = '""') =>
  z.string().optional().describe(description).meta({ example });
