/**
 * The set of tools the engine can offer, and the prepare phase: decode the model's argument text
 * (a bare string maps to the tool's `primaryKey`), then validate it against the schema. Every
 * failure here becomes a tool result the model sees; nothing here throws at the turn.
 */
import type { Logger } from 'pino';
import type { Db } from '../store/db.js';
import { recordKnownTools } from '../store/repos/known-tools.js';
import type { SourceStatus, ToolSource } from '../tools/source.js';
import { StaticToolSource } from '../tools/source.js';
import type { AnyTool, ParseResult } from '../tools/types.js';
import type { ChannelCapability } from '../contract/channel.js';
import { type DeferredGroup, isOwnTool, modelSchema } from './deferred-tools.js';
import type { ModelTool } from './llm.js';

/** Distinct tool lists kept at once (per channel, rule set, granted groups); plenty in practice. */
const MAX_OFFERS = 64;

const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

/** A lazy group as listed in the system prompt. */
export interface LazyGroup {
  name: string;
  description: string;
}

/**
 * The one catalog the model sees, fed by {@link ToolSource}s in the order they were added
 * (core tools, built-ins, plugins, then MCP servers). A name already taken is refused with a
 * logged reason rather than shadowing the earlier tool; between static sources (built-ins and
 * plugins) that is a misconfiguration and throws.
 */
export class ToolRegistry {
  private readonly core: AnyTool[] = [];
  private readonly sources: ToolSource[] = [new StaticToolSource('core', this.core)];
  private tools = new Map<string, AnyTool>();
  private readonly accepted = new Map<string, string[]>();
  private readonly refused = new Map<string, string[]>();
  private readonly lazyDescriptions = new Map<string, string>();
  /** Built-in deferred groups, and the group of each of their tools (see `deferred-tools.ts`). */
  private readonly deferredGroups = new Map<string, DeferredGroup>();
  private readonly deferredOf = new Map<string, string>();
  private readonly changeListeners = new Set<() => void>();
  private refreshing: Promise<void> = Promise.resolve();
  /** Model-facing tool lists by the names they hold; emptied whenever the catalog changes. */
  private readonly offers = new Map<string, ModelTool[]>();
  private version = 0;
  private lazy: { version: number; groups: readonly LazyGroup[] } | null = null;

  constructor(private readonly log?: Logger) {}

  /** Add a core tool (the question tool, `activate_tools`). @throws when the name is taken or invalid. */
  register(tool: AnyTool): void {
    if (!TOOL_NAME.test(tool.name)) throw new Error(`invalid tool name "${tool.name}"`);
    if (this.tools.has(tool.name)) throw new Error(`tool "${tool.name}" is registered twice`);
    this.core.push(tool);
    this.tools.set(tool.name, tool);
    this.catalogChanged();
  }

  /** Forget the model-facing lists built from the previous catalog. */
  private catalogChanged(): void {
    this.offers.clear();
    this.version++;
  }

  /**
   * Moves whenever what a conversation could be offered changes (a tool added or refused, a
   * group deferred, a lazy source added): what was derived from the catalog before is stale.
   */
  get catalogVersion(): number {
    return this.version;
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
      offer = Object.freeze(
        tools.map((t) => ({
          name: t.name,
          description: t.description,
          parameters: isOwnTool(t) ? modelSchema(t.parameters) : t.parameters,
        })),
      ) as ModelTool[];
      this.offers.set(key, offer);
    }
    return offer;
  }

  /**
   * Keep these built-in groups out of the catalog until `activate_tools` (or a call by name)
   * switches them on in a conversation.
   */
  defer(groups: readonly DeferredGroup[]): void {
    for (const g of groups) {
      this.deferredGroups.set(g.name, g);
      for (const name of g.tools) this.deferredOf.set(name, g.name);
    }
    this.catalogChanged();
  }

  /** The lazy group a tool waits in (an MCP server's, or a deferred built-in group), if any. */
  groupOf(tool: AnyTool): string | undefined {
    return tool.meta.lazyGroup ?? this.deferredOf.get(tool.name);
  }

  /** True for a built-in deferred group (switched on by a call by name too; MCP groups are not). */
  isDeferredGroup(group: string): boolean {
    return this.deferredGroups.has(group);
  }

  /** Add a source; its tools join the catalog at the next {@link refresh}. */
  addSource(source: ToolSource): void {
    this.sources.push(source);
    if (source.lazy) {
      this.lazyDescriptions.set(source.lazy.name, source.lazy.description);
      this.catalogChanged();
    }
    source.onToolsChanged?.(() => {
      this.refresh().catch((err) => this.log?.error({ err, source: source.name }, 'tool catalog refresh failed'));
    });
  }

  /** Connect every source concurrently (each bounds its own wait), then build the catalog. */
  async connectAll(): Promise<void> {
    await Promise.all(this.sources.map((s) => s.connect()));
    await this.refresh();
  }

  /** Called after each catalog rebuild (e.g. to record known tools). */
  onChange(listener: () => void): void {
    this.changeListeners.add(listener);
  }

  /**
   * Rebuild the catalog from every source. Serialised, so two list_changed notifications in a row
   * cannot interleave their rebuilds.
   */
  refresh(): Promise<void> {
    this.refreshing = this.refreshing.then(
      () => this.rebuild(),
      () => this.rebuild(),
    );
    return this.refreshing;
  }

  private async rebuild(): Promise<void> {
    const lists = await Promise.all(this.sources.map(async (s) => ({ source: s, tools: await s.listTools() })));
    const next = new Map<string, AnyTool>();
    for (const { source, tools } of lists) {
      const ok: string[] = [];
      const bad: string[] = [];
      for (const tool of tools) {
        const holder = next.get(tool.name);
        const problem = !TOOL_NAME.test(tool.name)
          ? `invalid tool name "${tool.name}"`
          : holder
            ? `tool "${tool.name}" of ${source.name} collides with the one from ${holder.meta.source ?? 'builtin'}`
            : null;
        if (problem) {
          if (source instanceof StaticToolSource)
            throw new Error(problem.replace(/collides with.*/, 'is registered twice'));
          bad.push(`${tool.name}: ${problem}`);
          continue;
        }
        next.set(tool.name, tool);
        ok.push(tool.name);
      }
      const before = this.refused.get(source.name) ?? [];
      for (const reason of bad)
        if (!before.includes(reason)) this.log?.warn({ source: source.name, reason }, 'tool refused');
      this.accepted.set(source.name, ok);
      this.refused.set(source.name, bad);
    }
    this.tools = next;
    this.catalogChanged();
    for (const l of this.changeListeners) l();
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

  /**
   * Lazy groups, with the one-line description each shows in the system prompt: one frozen list
   * until the catalog changes (every model round asks).
   */
  lazyGroups(): readonly LazyGroup[] {
    if (this.lazy?.version !== this.version) {
      const groups = [
        ...[...this.deferredGroups.values()].map((g) => Object.freeze({ name: g.name, description: g.description })),
        ...[...this.lazyDescriptions].map(([name, description]) => Object.freeze({ name, description })),
      ];
      this.lazy = { version: this.version, groups: Object.freeze(groups) };
    }
    return this.lazy.groups;
  }

  /** State of every source except the core tools, with the tools it contributes and those refused. */
  statuses(): SourceStatus[] {
    return this.sources
      .filter((s) => s.name !== 'core')
      .map((s) => ({ ...s.status(), tools: this.accepted.get(s.name) ?? [], refused: this.refused.get(s.name) ?? [] }));
  }

  /** Close every source (MCP connections, their processes). */
  async closeAll(): Promise<void> {
    await Promise.allSettled(this.sources.map((s) => s.close()));
  }

  /** Record every tool in `known_tools` (first and last seen). */
  async recordKnown(db: Db): Promise<void> {
    // One commit for the whole catalog (a start-up cost otherwise paid per tool).
    await recordKnownTools(
      db,
      [...this.tools.values()].map((t) => ({
        name: t.name,
        source: t.meta.source ?? 'builtin',
        description: t.description,
      })),
    );
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
