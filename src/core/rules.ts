/**
 * Approval rules: tool-name glob, optional path glob, optional exact arguments, action, priority;
 * first match wins. A grant made from a card covers exactly what the card showed: the path for
 * file tools, else the exact arguments the tool scopes grants to (bash: the command line, the
 * workdir and foreground or background). A grant keeps the reach it was recorded with: its
 * `grant_version` says which arguments its key holds ({@link GRANT_VERSION}).
 * Order: higher priority first; at equal priority a session grant beats a stored rule, which
 * beats a rule from config (so "always" outranks a configured `require` of the same priority).
 * If the rules cannot be read, the gate fails closed (deny).
 */
import { createHash } from 'node:crypto';
import path from 'node:path';
import picomatch from 'picomatch';
import type { Config } from '../config.js';
import type { Db } from '../store/db.js';
import { hotCache } from '../store/hot-cache.js';
import type { ApprovalRule } from '../store/schema.js';
import type { AnyTool } from '../tools/types.js';

/** What a rule decides. */
export type RuleAction = 'allow' | 'require' | 'deny';

/** A rule from any source. */
export interface Rule {
  toolGlob: string;
  pathGlob: string | null;
  /** Canonical JSON of the only arguments the rule covers ({@link grantArgs}); null: any. */
  argsExact: string | null;
  /** Which arguments {@link argsExact} holds: the grant version it was recorded with. */
  argsVersion: GrantVersion;
  action: RuleAction;
  priority: number;
  /** 2 session, 1 stored, 0 config: the tie-breaker. */
  rank: number;
  source: string;
}

/** Outcome of the gate for one call. */
export interface GateDecision {
  action: RuleAction;
  reason: string;
}

const matcherCache = new Map<string, (s: string) => boolean>();
function glob(pattern: string): (s: string) => boolean {
  let m = matcherCache.get(pattern);
  if (!m) {
    m = picomatch(pattern, { dot: true });
    matcherCache.set(pattern, m);
  }
  return m;
}

/** Rules built from each stored list the hot cache holds, with the config they were built with. */
const built = new WeakMap<readonly ApprovalRule[], { config: Config; rules: readonly Rule[] }>();

/**
 * Every rule in force for a requester's turn in a conversation, in match order. Stored rules come
 * from the store's in-memory copy, checked against the rules' change counter (`store/hot-cache.ts`);
 * while that copy holds, the same (frozen) list is returned, so it is built once per change of
 * the rules rather than for every model round and tool phase, and callers may key on it.
 */
export async function loadRules(
  db: Db,
  config: Config,
  conversationId: string,
  requester: string,
): Promise<readonly Rule[]> {
  const stored = await hotCache(db).rulesFor(conversationId, requester);
  const known = built.get(stored);
  if (known?.config === config) return known.rules;
  const rules: Rule[] = [
    ...stored.map((r) => ({
      toolGlob: r.tool_glob,
      pathGlob: r.path_glob,
      argsExact: r.args_exact ?? null,
      argsVersion: grantVersionOf(r.grant_version),
      action: r.action,
      priority: r.priority,
      rank: r.conversation_id ? 2 : 1,
      source: r.conversation_id ? 'session grant' : `rule #${r.id}`,
    })),
    ...config.approvals.rules.map((r, i) => ({
      toolGlob: r.tool,
      pathGlob: r.path ?? null,
      argsExact: null,
      argsVersion: GRANT_VERSION,
      action: r.action,
      priority: r.priority,
      rank: 0,
      source: `config rule ${i + 1}`,
    })),
  ];
  const sorted = Object.freeze(
    rules.sort((a, b) => b.priority - a.priority || b.rank - a.rank).map((r) => Object.freeze(r)),
  );
  built.set(stored, { config, rules: sorted });
  return sorted;
}

/**
 * First rule matching a tool name, (when the rule has one) a workspace-relative path and (when
 * the rule has them) the call's exact arguments, `keys` from {@link grantKeys}: a rule compares
 * the key of its own grant version.
 */
export function matchRule(
  rules: readonly Rule[],
  toolName: string,
  relPath: string | undefined,
  keys: GrantKeys | null = null,
): Rule | undefined {
  return rules.find((r) => {
    if (!glob(r.toolGlob)(toolName)) return false;
    if (r.argsExact !== null && r.argsExact !== keys?.[r.argsVersion]) return false;
    if (r.pathGlob === null) return true;
    if (relPath === undefined) return false;
    return glob(r.pathGlob)(relPath.split(path.sep).join('/'));
  });
}

/** Decide allow / require / deny for one call. */
export function gate(
  rules: readonly Rule[],
  tool: AnyTool,
  relPath: string | undefined,
  keys: GrantKeys | null = null,
): GateDecision {
  const rule = matchRule(rules, tool.name, relPath, keys);
  if (rule) return { action: rule.action, reason: rule.source };
  return { action: tool.meta.defaultApproval, reason: 'tool default' };
}

/** True when a tool is denied outright (a path-less, argument-less deny rule matches first): never offered. */
export function isToolDenied(rules: readonly Rule[], toolName: string): boolean {
  const rule = rules.find((r) => r.pathGlob === null && r.argsExact === null && glob(r.toolGlob)(toolName));
  return rule?.action === 'deny';
}

/** JSON with object keys sorted at every level: one text for equal arguments. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/**
 * The sha256 (hex) of a call's arguments in canonical JSON: what an approval is bound to. A
 * decision applies only to arguments with the same hash as those its card showed.
 */
export function argumentsHash(args: unknown): string {
  return createHash('sha256')
    .update(canonicalJson(args ?? {}))
    .digest('hex');
}

/**
 * Which arguments a grant of a call without a path holds. 1: grants recorded before the workdir
 * and background were part of a bash grant (bash: the command alone; other tools: all their
 * arguments); 2: every argument the card names that widens what runs (bash: command, workdir,
 * foreground or background; not the timeout). A stored grant is matched with its own version's
 * key, so it keeps the reach it was recorded with.
 */
export type GrantVersion = 1 | 2;

/** The version new grants are recorded with. */
export const GRANT_VERSION: GrantVersion = 2;

/** A stored `grant_version` (null or unknown: the first). */
export function grantVersionOf(stored: number | null | undefined): GrantVersion {
  return stored === 2 ? 2 : 1;
}

/** The grant keys of one call, one per {@link GrantVersion}. */
export type GrantKeys = Readonly<Record<GrantVersion, string>>;

/**
 * What a grant of a call without a path covers, in a version's terms: the canonical JSON of the
 * arguments the tool scopes grants to (`meta.grantArgs`, an absent one as its
 * `meta.grantArgDefaults`; version 1: `meta.legacyGrantArgs` as given), else of all its
 * arguments — free-form arguments (a shell command, an MCP tool's input) are granted only
 * exactly as the card showed them. In words: `alwaysScopeText` in `delivery/grant-words.ts`.
 */
export function grantArgs(tool: Pick<AnyTool, 'meta'>, args: unknown, version: GrantVersion = GRANT_VERSION): string {
  const { grantArgs: current, legacyGrantArgs, grantArgDefaults } = tool.meta;
  const keys = version === 1 ? (legacyGrantArgs ?? current) : current;
  if (!keys || !args || typeof args !== 'object') return canonicalJson(args ?? {});
  const given = args as Record<string, unknown>;
  const picked: Record<string, unknown> = {};
  for (const k of keys) picked[k] = version === 1 ? given[k] : (given[k] ?? grantArgDefaults?.[k]);
  return canonicalJson(picked);
}

/** The key of a call in every grant version. */
export function grantKeys(tool: Pick<AnyTool, 'meta'>, args: unknown): GrantKeys {
  return { 1: grantArgs(tool, args, 1), 2: grantArgs(tool, args, 2) };
}

/** A literal path as a glob that matches exactly that path (glob characters escaped). */
export function literalGlob(relPath: string): string {
  return relPath
    .split(path.sep)
    .join('/')
    .replace(/[\\*?[\]{}()!+@]/g, (c) => `\\${c}`);
}

/** Who or where a stored rule applies: a session grant, one user, or everyone. */
export function ruleScope(rule: Pick<ApprovalRule, 'conversation_id' | 'user_id'>): string {
  if (rule.conversation_id) return `session ${rule.conversation_id}`;
  if (rule.user_id) return `user ${rule.user_id}`;
  return 'everyone';
}

/**
 * One line per stored rule (CLI `rules list`, `/rules`):
 * `ID  tool  path  action  scope  granted-by  created-at`, `*` for no path, `args:{…}` for a grant
 * of exact arguments.
 */
export function ruleLine(rule: ApprovalRule): string {
  return [
    rule.id,
    rule.tool_glob,
    rule.args_exact ? `args:${rule.args_exact}` : (rule.path_glob ?? '*'),
    rule.action,
    ruleScope(rule),
    rule.created_by ?? '-',
    new Date(rule.created_at).toISOString(),
  ].join('  ');
}
