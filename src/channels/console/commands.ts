/**
 * Slash commands of the terminal chat. They work at every prompt (an open approval, a denial
 * note, a question), so `/stop` and `/quit` are never trapped behind "please answer y/n".
 */
import type { CoreApi } from '../../contract/core.js';
import { rulesCommand } from '../../core/rules-command.js';
import { errorMessage } from '../../errors.js';
import { mcpStatusText } from '../../tools/source.js';

/** The one-line help shown at start and by `/help`. */
export const CONSOLE_HELP =
  'Commands: /stop (cancel the turn), /new (fresh conversation), /status, /model [name], /rules [revoke ID], /mcp (tool servers), /quit. Anything else goes to the model.';

/** What a command needs from the console channel. */
export interface CommandHost {
  print(text: string): void;
  ref(): { channel: string; chatKey: string };
  quit(): Promise<void>;
  readonly prompts: unknown[];
}

/**
 * Run `line` if it is a known command.
 * @returns false when it is not a command (the line goes on to the prompt or the model).
 */
export async function runCommand(host: CommandHost, core: CoreApi, line: string, principal: string): Promise<boolean> {
  const [name = '', ...rest] = line.split(/\s+/);
  const arg = rest.join(' ').trim();
  switch (name) {
    case '/quit':
    case '/exit':
      await host.quit();
      return true;
    case '/help':
      host.print(CONSOLE_HELP);
      return true;
    case '/stop': {
      const before = await core.status(host.ref());
      const stopped = await core.stop(host.ref(), principal);
      host.prompts.length = 0;
      // A stopped turn reports itself once ("(stopped)" on turn_done); only say more otherwise.
      if (!stopped) host.print('(nothing to stop)');
      else if (before.turn === 'idle') host.print('(stopped: queued messages dropped)');
      return true;
    }
    case '/new':
      await core.newConversation(host.ref(), principal);
      host.prompts.length = 0;
      host.print('(new conversation)');
      return true;
    case '/status': {
      const s = await core.status(host.ref());
      const elsewhere = s.pendingElsewhere?.length ? ` · waiting in other conversations: ${s.pendingElsewhere.join(', ')} (open with --conversation NAME)` : '';
      host.print(`model ${s.model} · turn ${s.turn} · approvals ${s.pendingApprovals} · questions ${s.pendingQuestions} · queued ${s.queued}${elsewhere}`);
      return true;
    }
    case '/model': {
      if (!arg) {
        host.print(`model ${(await core.status(host.ref())).model} (/model NAME to change, /model default to reset)`);
        return true;
      }
      try {
        host.print(`(model ${await core.setModel(host.ref(), arg === 'default' ? null : arg)})`);
      } catch (err) {
        host.print(`(${errorMessage(err)})`);
      }
      return true;
    }
    case '/rules':
      await showRules(host, core, arg, principal);
      return true;
    case '/mcp':
      host.print(mcpStatusText(core.toolSources()));
      return true;
    default:
      return false;
  }
}

async function showRules(host: CommandHost, core: CoreApi, arg: string, principal: string): Promise<void> {
  const r = await rulesCommand(core, principal, arg);
  host.print(r.table ? r.text : `(${r.text})`);
}
