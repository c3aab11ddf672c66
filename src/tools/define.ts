/**
 * `defineTool`: build a {@link Tool} from a zod schema, so the JSON Schema the model sees and the
 * validation the engine runs come from one source.
 */
import { z } from 'zod';
import type { Tool, ToolLabel, ToolResult, ToolSpec } from './types.js';

/** Trim a label to `max` characters with an ellipsis. */
export function clip(text: string, max: number): string {
  const oneLine = text.replace(/\s+/g, ' ').trim();
  return oneLine.length <= max ? oneLine : `${oneLine.slice(0, max - 1)}…`;
}

/** Make both label lengths from one string. */
export function label(text: string): ToolLabel {
  return { short: clip(text, 60), long: clip(text, 120) };
}

function formatZodError(error: z.ZodError): string {
  return error.issues
    .slice(0, 5)
    .map((i) => `${i.path.length ? i.path.join('.') : '(arguments)'}: ${i.message}`)
    .join('; ');
}

/** Define a tool from a zod object schema. */
export function defineTool<S extends z.ZodType>(spec: ToolSpec<S>): Tool<z.infer<S>> {
  // The JSON Schema is made when first asked for (the first model request, not start-up).
  let jsonSchema: Record<string, unknown> | undefined;
  return {
    name: spec.name,
    description: spec.description,
    get parameters(): Record<string, unknown> {
      if (!jsonSchema) {
        jsonSchema = z.toJSONSchema(spec.schema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
        delete jsonSchema.$schema;
      }
      return jsonSchema;
    },
    meta: spec.meta,
    parse(args) {
      const r = spec.schema.safeParse(args);
      return r.success ? { ok: true, value: r.data } : { ok: false, error: formatZodError(r.error) };
    },
    describe(args) {
      const d = spec.describe(args);
      return typeof d === 'string' ? label(d) : { short: clip(d.short, 60), long: clip(d.long, 120) };
    },
    targetPath: spec.targetPath,
    preview: spec.preview,
    async execute(args, ctx): Promise<ToolResult> {
      const r = await spec.execute(args, ctx);
      return typeof r === 'string' ? { output: r } : r;
    },
  };
}
