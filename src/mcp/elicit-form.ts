/**
 * One field of an MCP form elicitation as a chat question: its wording, its buttons (an enum's
 * values, Yes / No for a boolean, Skip for an optional field) and the check of a typed reply
 * against the field's schema. Pure functions: no SDK, no I/O.
 */

/** A field's schema as the spec allows it (primitive types, enums, multi-select arrays). */
export interface FieldSchema {
  type?: string;
  title?: string;
  description?: string;
  enum?: unknown[];
  enumNames?: string[];
  oneOf?: Array<{ const: unknown; title?: string }>;
  anyOf?: Array<{ const: unknown; title?: string }>;
  items?: {
    enum?: unknown[];
    anyOf?: Array<{ const: unknown; title?: string }>;
    oneOf?: Array<{ const: unknown; title?: string }>;
  };
  format?: string;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  default?: unknown;
}

/** Buttons that end the whole form (the spec's `decline` and `cancel`). */
export const DECLINE = 'Decline';
export const CANCEL = 'Cancel';
/** The button of an optional field left empty. */
export const SKIP = 'Skip';

/** A field's allowed values with the label shown for each. */
function choices(f: FieldSchema): Array<{ value: unknown; label: string }> | null {
  const titled = f.oneOf ?? f.anyOf;
  if (titled?.every((o) => o && 'const' in o))
    return titled.map((o) => ({ value: o.const, label: o.title ?? String(o.const) }));
  if (f.enum) return f.enum.map((v, i) => ({ value: v, label: f.enumNames?.[i] ?? String(v) }));
  return null;
}

/** The allowed values of a multi-select field's items. */
function itemChoices(f: FieldSchema): Array<{ value: unknown; label: string }> | null {
  if (f.type !== 'array' || !f.items) return null;
  return choices(f.items as FieldSchema);
}

/** Buttons for a field (before Skip / Decline / Cancel). */
export function fieldButtons(f: FieldSchema): string[] {
  if (f.type === 'boolean') return ['Yes', 'No'];
  return choices(f)?.map((c) => c.label) ?? [];
}

/** The question text for one field. */
export function fieldQuestion(f: FieldSchema, name: string, required: boolean): string {
  const lines = [
    `${f.title ?? name}${required ? ' (required)' : ' (optional)'}${f.description ? `: ${f.description}` : ''}`,
  ];
  const hints: string[] = [];
  const many = itemChoices(f);
  if (many) hints.push(`one or more of ${many.map((c) => c.label).join(', ')}, separated by commas`);
  if (f.type === 'integer') hints.push('a whole number');
  else if (f.type === 'number') hints.push('a number');
  if (f.minimum !== undefined) hints.push(`at least ${f.minimum}`);
  if (f.maximum !== undefined) hints.push(`at most ${f.maximum}`);
  if (f.format) hints.push(`format ${f.format}`);
  if (f.minLength !== undefined) hints.push(`at least ${f.minLength} characters`);
  if (f.maxLength !== undefined) hints.push(`at most ${f.maxLength} characters`);
  if (f.minItems !== undefined) hints.push(`at least ${f.minItems} chosen`);
  if (f.maxItems !== undefined) hints.push(`at most ${f.maxItems} chosen`);
  if (f.default !== undefined)
    hints.push(`default ${Array.isArray(f.default) ? f.default.join(', ') : String(f.default)}`);
  if (hints.length) lines.push(`(${hints.join('; ')})`);
  return lines.join('\n');
}

/** The reply checked against the field: the value to send, or why it is refused. */
export function parseField(
  f: FieldSchema,
  reply: string,
): { ok: true; value: unknown } | { ok: false; reason: string } {
  const text = reply.trim();
  const one = choices(f);
  if (one) {
    const hit = one.find(
      (c) => c.label.toLowerCase() === text.toLowerCase() || String(c.value).toLowerCase() === text.toLowerCase(),
    );
    return hit
      ? { ok: true, value: hit.value }
      : { ok: false, reason: `choose one of ${one.map((c) => c.label).join(', ')}` };
  }
  const many = itemChoices(f);
  if (many) {
    const picked: unknown[] = [];
    for (const part of text
      .split(',')
      .map((p) => p.trim())
      .filter(Boolean)) {
      const hit = many.find(
        (c) => c.label.toLowerCase() === part.toLowerCase() || String(c.value).toLowerCase() === part.toLowerCase(),
      );
      if (!hit) return { ok: false, reason: `"${part}" is not one of ${many.map((c) => c.label).join(', ')}` };
      if (!picked.includes(hit.value)) picked.push(hit.value);
    }
    if (f.minItems !== undefined && picked.length < f.minItems)
      return { ok: false, reason: `choose at least ${f.minItems}` };
    if (f.maxItems !== undefined && picked.length > f.maxItems)
      return { ok: false, reason: `choose at most ${f.maxItems}` };
    return { ok: true, value: picked };
  }
  switch (f.type) {
    case 'boolean': {
      if (/^(yes|y|true)$/i.test(text)) return { ok: true, value: true };
      if (/^(no|n|false)$/i.test(text)) return { ok: true, value: false };
      return { ok: false, reason: 'answer Yes or No' };
    }
    case 'integer':
    case 'number': {
      const n = Number(text.replace(/_/g, ''));
      if (text === '' || !Number.isFinite(n)) return { ok: false, reason: `"${text}" is not a number` };
      if (f.type === 'integer' && !Number.isInteger(n)) return { ok: false, reason: `"${text}" is not a whole number` };
      if (f.minimum !== undefined && n < f.minimum) return { ok: false, reason: `${n} is less than ${f.minimum}` };
      if (f.maximum !== undefined && n > f.maximum) return { ok: false, reason: `${n} is more than ${f.maximum}` };
      return { ok: true, value: n };
    }
    default: {
      if (f.minLength !== undefined && text.length < f.minLength)
        return { ok: false, reason: `at least ${f.minLength} characters, please` };
      if (f.maxLength !== undefined && text.length > f.maxLength)
        return { ok: false, reason: `at most ${f.maxLength} characters, please` };
      const problem = f.format ? formatProblem(f.format, text) : null;
      return problem ? { ok: false, reason: problem } : { ok: true, value: text };
    }
  }
}

/** Why `text` does not have the string `format`, or null. */
function formatProblem(format: string, text: string): string | null {
  switch (format) {
    case 'email':
      return /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(text) ? null : `"${text}" is not an email address`;
    case 'uri':
      return URL.canParse(text) ? null : `"${text}" is not a URI (e.g. https://example.org)`;
    case 'date':
      return /^\d{4}-\d{2}-\d{2}$/.test(text) && !Number.isNaN(Date.parse(text))
        ? null
        : `"${text}" is not a date like 2024-05-31`;
    case 'date-time':
      return !Number.isNaN(Date.parse(text)) && /\d{4}-\d{2}-\d{2}T/.test(text)
        ? null
        : `"${text}" is not a date and time like 2024-05-31T14:30:00Z`;
    default:
      return null;
  }
}
