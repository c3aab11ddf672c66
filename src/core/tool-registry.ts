/**
 * The set of tools the engine can offer, and the prepare phase: decode the model's argument text
 * (a bare string maps to the tool's `primaryKey`), then validate it against the schema. Every
 * failure here becomes a tool result the model sees; nothing here throws at the turn.
 */
import type { Db } from '../store/db.js';
import type { AnyTool, ChannelCapability, ParseResult } from '../tools/types.js';
import type { ModelTool } from './llm.js';

/** Distinct tool lists kept at once (per channel, rule set, granted groups); plenty in practice. */
const MAX_OFFERS = 64;

/** Holds tools by name. */
export class ToolRegistry {
  private readonly tools = new Map<string, AnyTool>();
  /** Model-facing tool lists by the names they hold; emptied whenever the catalog changes. */
  private readonly offers = new Map<string, ModelTool[]>();

  /** Add a tool. @throws when the name is taken (a misconfiguration, not a model error). */
  register(tool: AnyTool): void {
    if (!/^[a-zA-Z0-9_-]{1,64}$/.test(tool.name)) throw new Error(`invalid tool name "${tool.name}"`);
    if (this.tools.has(tool.name)) throw new Error(`tool "${tool.name}" is registered twice`);
    this.tools.set(tool.name, tool);
    this.catalogChanged();
  }

  /** Forget the model-facing lists built from the previous catalog. */
  private catalogChanged(): void {
    this.offers.clear();
  }

  /**
   * The model's view of `tools`: the same array for the same tools until the catalog changes, so
   * it is built once and the LLM client serialises it once (see `LlmClient.stream`), not per round.
   */
  modelTools(tools: AnyTool[]): ModelTool[] {
    const key = tools.map((t) => t.name).join('\n');
    let offer = this.offers.get(key);
    if (!offer) {
      if (this.offers.size >= MAX_OFFERS) this.offers.clear();
      offer = Object.freeze(tools.map((t) => ({ name: t.name, description: t.description, parameters: t.parameters }))) as ModelTool[];
      this.offers.set(key, offer);
    }
    return offer;
  }

  get(name: string): AnyTool | undefined {
    return this.tools.get(name);
  }

  all(): AnyTool[] {
    return [...this.tools.values()];
  }

  /** Tools a channel with these capabilities can serve. */
  forCapabilities(caps: ReadonlySet<ChannelCapability>): AnyTool[] {
    return this.all().filter((t) => (t.meta.requires ?? []).every((c) => caps.has(c)));
  }

  /** Record every tool in `known_tools` (first and last seen). */
  async recordKnown(db: Db): Promise<void> {
    const now = Date.now();
    // One commit for the whole catalog (a start-up cost otherwise paid per tool).
    await db.transaction().execute(async (trx) => {
      for (const t of this.tools.values()) {
        await trx
          .insertInto('known_tools')
          .values({ name: t.name, source: t.meta.source ?? 'builtin', description: t.description, first_seen: now, last_seen: now })
          .onConflict((oc) => oc.column('name').doUpdateSet({ last_seen: now, description: t.description, source: t.meta.source ?? 'builtin' }))
          .execute();
      }
    });
  }
}

/**
 * Decode and validate raw argument text for `tool`.
 * Models sometimes send `ls -la` instead of `{"command":"ls -la"}`: with a `primaryKey` that is
 * accepted; anything else that is not a JSON object is a clear error for the model.
 */
export function prepareArguments(tool: AnyTool, raw: string): ParseResult<unknown> {
  const text = raw.trim();
  let decoded: unknown;
  if (text === '') {
    decoded = {};
  } else {
    try {
      decoded = JSON.parse(text);
    } catch (err) {
      const looksLikeJson = text.startsWith('{') || text.startsWith('[');
      if (tool.meta.primaryKey && !looksLikeJson) {
        decoded = text;
      } else {
        return { ok: false, error: `arguments are not valid JSON (${(err as Error).message}); send a JSON object` };
      }
    }
  }
  if (typeof decoded === 'string' || typeof decoded === 'number') {
    if (!tool.meta.primaryKey) return { ok: false, error: 'arguments must be a JSON object' };
    decoded = { [tool.meta.primaryKey]: String(decoded) };
  }
  if (decoded === null || typeof decoded !== 'object' || Array.isArray(decoded)) {
    return { ok: false, error: 'arguments must be a JSON object' };
  }
  const parsed = tool.parse(decoded);
  return parsed.ok ? parsed : { ok: false, error: `invalid arguments for ${tool.name}: ${parsed.error}` };
}
