/**
 * What a model round offers a conversation: the tools the channel can serve, no rule denies and
 * the conversation may use (core tools, then the lazy groups switched on here), and the
 * system-prompt line naming the deferred groups. The same from one round to the next until one of
 * its inputs changes, so it is worked out once per change instead of on every round: each offer
 * is kept with the inputs it was made from (the conversation row, the rules and granted groups as
 * the store's in-memory copy holds them, the channel's capabilities, the catalog's version) and
 * reused only while every one of them is the very same.
 */
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { Channel } from '../contract/channel.js';
import type { Db } from '../store/db.js';
import { hotCache } from '../store/hot-cache.js';
import type { Conversation } from '../store/schema.js';
import type { AnyTool } from '../tools/types.js';
import { ACTIVATE_TOOL, deferredLine, type LineGroup } from './deferred-tools.js';
import type { ModelTool } from './llm.js';
import { QUESTION_TOOL } from './question-tool.js';
import { isToolDenied, loadRules, type Rule } from './rules.js';
import { toolAllowed } from './subagents.js';
import type { ToolRegistry } from './tool-registry.js';

/** The tools of a round and the line of the system prompt that names the deferred groups. */
export interface ToolOffer {
  tools: ModelTool[];
  line: string | null;
}

/** What an offer was made from; all compared by identity. */
interface Made {
  rules: readonly Rule[];
  granted: ReadonlySet<string>;
  capabilities: ReadonlySet<unknown>;
  catalog: number;
  offer: ToolOffer;
}

/** No lazy group in the catalog: nothing can be granted. */
const NONE: ReadonlySet<string> = new Set();

/** Works out (and keeps) the offer of each conversation's rounds. */
export class ToolOffers {
  /** By conversation row: a changed row is a new object, so its old offer is never reused. */
  private readonly made = new WeakMap<Conversation, Made>();

  constructor(
    private readonly db: Db,
    private readonly config: Config,
    private readonly registry: ToolRegistry,
    private readonly log: Logger,
  ) {}

  /** The offer for a round of `conversation` on `channel`, for the turn of `requester`. */
  async offer(conversation: Conversation, channel: Channel, requester: string): Promise<ToolOffer> {
    const { db, config, registry } = this;
    let rules: readonly Rule[];
    try {
      rules = await loadRules(db, config, conversation.id, requester);
    } catch (err) {
      // Fail closed: without readable rules, offer only the question tool.
      this.log.error({ err }, 'approval rules could not be read; offering no tools');
      return { tools: registry.modelTools(registry.all().filter((t) => t.name === QUESTION_TOOL)), line: null };
    }
    const lazy = registry.lazyGroups();
    const granted = lazy.length ? await hotCache(db).grantedGroups(conversation.id) : NONE;
    const catalog = registry.catalogVersion;
    const known = this.made.get(conversation);
    if (
      known &&
      known.rules === rules &&
      known.granted === granted &&
      known.capabilities === channel.capabilities &&
      known.catalog === catalog
    ) {
      return known.offer;
    }
    const usable = registry
      .forCapabilities(channel.capabilities)
      .filter((t) => !isToolDenied(rules, t.name))
      .filter((t) => toolAllowed(conversation, t, config.subagents.max_depth));
    const core: AnyTool[] = [];
    const switchedOn: AnyTool[] = [];
    const waiting = new Map<string, string[]>();
    for (const t of usable) {
      const group = registry.groupOf(t);
      if (group === undefined) core.push(t);
      else {
        if (granted.has(group)) switchedOn.push(t);
        waiting.set(group, [...(waiting.get(group) ?? []), t.name]);
      }
    }
    // Every group usable here, switched on or not: the line stays the same all conversation long.
    const groups: LineGroup[] = lazy
      .filter((g) => waiting.has(g.name) || !registry.isDeferredGroup(g.name))
      .map((g) => (registry.isDeferredGroup(g.name) ? { ...g, tools: waiting.get(g.name) } : g));
    const hasActivate = core.some((t) => t.name === ACTIVATE_TOOL);
    const offer = {
      tools: registry.modelTools([...core, ...switchedOn]),
      line: hasActivate ? deferredLine(groups) : null,
    };
    this.made.set(conversation, { rules, granted, capabilities: channel.capabilities, catalog, offer });
    return offer;
  }
}
