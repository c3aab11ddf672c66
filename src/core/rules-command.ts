/**
 * `/rules` in any chat (console, Telegram, Slack): list the stored approval rules the user may
 * see, or `revoke ID` one. Channel-neutral plain text; each channel wraps it in its markup.
 */
import type { RuleControls } from '../contract/roles.js';
import { ruleLine } from './rules.js';

/** Header of the rules listing: the columns of {@link ruleLine}. */
export const RULES_HEADER = 'ID  tool  path  action  scope  granted-by  created-at';

/**
 * Run `/rules [revoke ID]` for principal `by`.
 * @returns the answer as plain text, and whether it is a table (to be shown monospaced).
 */
export async function rulesCommand(
  controls: RuleControls,
  by: string,
  args: string,
): Promise<{ text: string; table: boolean }> {
  const revoke = /^revoke\s+#?(\d+)$/i.exec(args.trim());
  if (revoke) {
    const r = await controls.revoke(Number(revoke[1]), by);
    return { text: r.ok ? `Revoked rule ${ruleLine(r.rule)}` : `Not revoked: ${r.reason}.`, table: false };
  }
  if (args.trim()) return { text: 'Usage: /rules, or /rules revoke ID', table: false };
  const rules = await controls.list(by);
  if (!rules.length)
    return { text: 'No stored rules. ("Always" and "This session" grants appear here.)', table: false };
  return { text: [RULES_HEADER, ...rules.map(ruleLine)].join('\n'), table: true };
}
