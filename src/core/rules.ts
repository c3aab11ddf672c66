/**
 * Approval rules: tool-name glob, optional path glob, action, priority; first match wins.
 * Order: higher priority first; at equal priority a session grant beats a stored rule, which
 * beats a rule from config (so "always" outranks a configured `require` of the same priority).
 * If the rules cannot be read, the gate fails closed (deny).
 */
import path from 'node:path';
import picomatch from 'picomatch';
import type { Config } from '../config.js';
import type { Db } from '../store/db.js';
import { listRules } from '../store/repos/approvals.js';
import type { AnyTool } from '../tools/types.js';

/** What a rule decides. */
export type RuleAction = 'allow' | 'require' | 'deny';

/** A rule from any source. */
export interface Rule {
  toolGlob: string;
  pathGlob: string | null;
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

/** Every rule in force for a conversation, in match order. */
export async function loadRules(db: Db, config: Config, conversationId: string): Promise<Rule[]> {
  const stored = await listRules(db, conversationId);
  const rules: Rule[] = [
    ...stored.map((r) => ({
      toolGlob: r.tool_glob,
      pathGlob: r.path_glob,
      action: r.action,
      priority: r.priority,
      rank: r.conversation_id ? 2 : 1,
      source: r.conversation_id ? 'session grant' : `rule #${r.id}`,
    })),
    ...config.approvals.rules.map((r, i) => ({
      toolGlob: r.tool,
      pathGlob: r.path ?? null,
      action: r.action,
      priority: r.priority,
      rank: 0,
      source: `config rule ${i + 1}`,
    })),
  ];
  return rules.sort((a, b) => b.priority - a.priority || b.rank - a.rank);
}

/** First rule matching a tool name and (when the rule has one) a workspace-relative path. */
export function matchRule(rules: Rule[], toolName: string, relPath: string | undefined): Rule | undefined {
  return rules.find((r) => {
    if (!glob(r.toolGlob)(toolName)) return false;
    if (r.pathGlob === null) return true;
    if (relPath === undefined) return false;
    return glob(r.pathGlob)(relPath.split(path.sep).join('/'));
  });
}

/** Decide allow / require / deny for one call. */
export function gate(rules: Rule[], tool: AnyTool, relPath: string | undefined): GateDecision {
  const rule = matchRule(rules, tool.name, relPath);
  if (rule) return { action: rule.action, reason: rule.source };
  return { action: tool.meta.defaultApproval, reason: 'tool default' };
}

/** True when a tool is denied outright (a path-less deny rule matches first): never offered. */
export function isToolDenied(rules: Rule[], toolName: string): boolean {
  const rule = rules.find((r) => r.pathGlob === null && glob(r.toolGlob)(toolName));
  return rule?.action === 'deny';
}
