/**
 * The key space of the configuration schema: every leaf key, its generic environment name
 * (`SWITCHBOARD__<SECTION>__<KEY>`), the check for unknown keys with the closest valid one, and
 * reading the generic environment variables. Derived from the zod schema, so a new key is covered
 * without touching this file.
 */
import type { z } from 'zod';

/** Prefix of the generic environment names. */
export const ENV_PREFIX = 'SWITCHBOARD__';

type AnySchema = z.ZodType;
interface Def {
  type: string;
  innerType?: AnySchema;
  in?: AnySchema;
  out?: AnySchema;
  options?: AnySchema[];
  element?: AnySchema;
  valueType?: AnySchema;
  shape?: Record<string, AnySchema>;
}

function defOf(schema: AnySchema): Def {
  return (schema as unknown as { def: Def }).def;
}

/** Strip default / optional / prefault / nullable wrappers. */
function unwrap(schema: AnySchema): AnySchema {
  let s = schema;
  for (;;) {
    const d = defOf(s);
    if (d.innerType && ['default', 'optional', 'prefault', 'nullable', 'catch', 'readonly'].includes(d.type))
      s = d.innerType;
    else return s;
  }
}

function objectShape(schema: AnySchema): Record<string, AnySchema> | null {
  const s = unwrap(schema);
  const d = defOf(s);
  if (d.type === 'object') return (s as unknown as { shape: Record<string, AnySchema> }).shape;
  return null;
}

/** Every leaf key of an object schema, dotted (`tools.web_search.backend`). */
export function leafKeys(schema: AnySchema, prefix = ''): string[] {
  const shape = objectShape(schema);
  if (!shape) return [prefix.replace(/\.$/, '')];
  return Object.entries(shape).flatMap(([k, v]) => leafKeys(v, `${prefix}${k}.`));
}

/** The schema of a dotted key, or undefined. */
export function schemaAt(schema: AnySchema, dotted: string): AnySchema | undefined {
  let node: AnySchema | undefined = schema;
  for (const part of dotted.split('.')) {
    const shape: Record<string, AnySchema> | null = node ? objectShape(node) : null;
    node = shape?.[part];
    if (!node) return undefined;
  }
  return node;
}

/** Whether a leaf takes a list or a table (so an environment value may be JSON). */
export function takesStructured(schema: AnySchema): boolean {
  const d = defOf(unwrap(schema));
  if (d.type === 'array' || d.type === 'object' || d.type === 'record') return true;
  if (d.type === 'pipe') return d.in ? takesStructured(d.in) : false;
  if (d.type === 'union') return (d.options ?? []).some(takesStructured);
  return false;
}

/** The generic environment name of a dotted key: `tools.web_search.api_key` → `SWITCHBOARD__TOOLS__WEB_SEARCH__API_KEY`. */
export function envNameOf(dotted: string): string {
  return ENV_PREFIX + dotted.split('.').join('__').toUpperCase();
}

/** Edit distance (insertions, deletions, substitutions), for "did you mean". */
export function levenshtein(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) {
      cur[j] = Math.min(
        (prev[j] as number) + 1,
        (cur[j - 1] as number) + 1,
        (prev[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
    }
    prev = cur;
  }
  return prev[b.length] as number;
}

/** The candidate closest to `word` (ties: the first). */
export function closest(word: string, candidates: string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const c of candidates) {
    const d = levenshtein(word.toLowerCase(), c.toLowerCase());
    if (d < bestDistance) {
      best = c;
      bestDistance = d;
    }
  }
  return best;
}

/** An unknown key in the raw configuration. */
export interface UnknownKey {
  /** Dotted path of the unknown key (array items as `[i]`). */
  key: string;
  /** Whether it names a table (`[telegarm]`) rather than a value. */
  table: boolean;
  /** The closest valid key at that level, dotted. */
  suggestion: string | undefined;
  /** Path segments to the key in the raw object (to drop it and go on). */
  path: Array<string | number>;
}

/** The first key in `raw` the schema does not know, or null. Records (free-form tables) accept any key. */
export function findUnknownKey(
  schema: AnySchema,
  raw: unknown,
  prefix = '',
  at: Array<string | number> = [],
): UnknownKey | null {
  const s = unwrap(schema);
  const d = defOf(s);
  if (d.type === 'object' && raw && typeof raw === 'object' && !Array.isArray(raw)) {
    const shape = (s as unknown as { shape: Record<string, AnySchema> }).shape;
    for (const [k, v] of Object.entries(raw as Record<string, unknown>)) {
      const child = shape[k];
      if (!child) {
        const near = closest(k, Object.keys(shape));
        const isTable = typeof v === 'object' && v !== null && !Array.isArray(v);
        return {
          key: `${prefix}${k}`,
          table: isTable,
          suggestion: near === undefined ? undefined : `${prefix}${near}`,
          path: [...at, k],
        };
      }
      const inner = findUnknownKey(child, v, `${prefix}${k}.`, [...at, k]);
      if (inner) return inner;
    }
    return null;
  }
  if (d.type === 'array' && Array.isArray(raw) && d.element) {
    for (const [i, item] of raw.entries()) {
      const inner = findUnknownKey(d.element, item, `${prefix.replace(/\.$/, '')}[${i}].`, [...at, i]);
      if (inner) return inner;
    }
    return null;
  }
  if (d.type === 'record' && raw && typeof raw === 'object' && !Array.isArray(raw) && d.valueType) {
    for (const [k, v] of Object.entries(raw as Record<string, unknown>)) {
      const inner = findUnknownKey(d.valueType, v, `${prefix}${k}.`, [...at, k]);
      if (inner) return inner;
    }
  }
  return null;
}

/** Remove the value at `path` from a raw object (a no-op when absent). */
export function deleteAt(raw: unknown, path: ReadonlyArray<PropertyKey>): void {
  let node = raw as Record<PropertyKey, unknown> | undefined;
  for (const part of path.slice(0, -1)) {
    node = node?.[part] as Record<PropertyKey, unknown> | undefined;
    if (typeof node !== 'object' || node === null) return;
  }
  const last = path.at(-1);
  if (node && last !== undefined) {
    if (Array.isArray(node) && typeof last === 'number') node.splice(last, 1);
    else delete node[last];
  }
}

/**
 * Read `SWITCHBOARD__SECTION__KEY` variables into dotted keys. Lists may be comma-separated or
 * JSON; tables (and lists of tables) are JSON.
 * @returns the values by dotted key, and the unknown names with the closest valid one each.
 */
export function genericEnv(
  schema: AnySchema,
  env: NodeJS.ProcessEnv,
): {
  values: Array<{ key: string; name: string; value: unknown }>;
  unknown: Array<{ name: string; suggestion: string }>;
} {
  const known = new Map(leafKeys(schema).map((k) => [envNameOf(k), k]));
  const values: Array<{ key: string; name: string; value: unknown }> = [];
  const unknown: Array<{ name: string; suggestion: string }> = [];
  for (const [name, raw] of Object.entries(env)) {
    if (!name.startsWith(ENV_PREFIX) || raw === undefined) continue;
    const key = known.get(name);
    if (!key) {
      unknown.push({ name, suggestion: closest(name, [...known.keys()]) ?? '' });
      continue;
    }
    const leaf = schemaAt(schema, key) as AnySchema;
    let value: unknown = raw;
    const trimmed = raw.trim();
    if (takesStructured(leaf) && (trimmed.startsWith('[') || trimmed.startsWith('{'))) {
      try {
        value = JSON.parse(trimmed);
      } catch {
        value = raw; // not JSON: validated (and refused) as the plain string it is
      }
    }
    values.push({ key, name, value });
  }
  return { values, unknown };
}
