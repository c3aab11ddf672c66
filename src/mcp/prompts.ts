/**
 * A server's prompts as the chat command `/prompt`: without arguments it lists every connected
 * server's prompts with their arguments; `/prompt <server> <name> key=value …` fetches the prompt
 * and sends its messages as the user's next message, so the assistant answers it like any other.
 */
import type { GetPromptResult, Prompt } from '@modelcontextprotocol/sdk/types.js';
import { registerCommand, unregisterCommand } from '../core/commands.js';
import { errorMessage } from '../errors.js';
import type { McpConnection } from './connection.js';

/** A server whose prompts `/prompt` can reach. */
export interface PromptServer {
  readonly server: string;
  readonly connection: McpConnection;
}

/** Sources of this process that may answer `/prompt`, newest last (tests run several cores). */
const live: PromptServer[] = [];

/** Make a source's prompts reachable from `/prompt` until it closes. */
export function servePrompts(source: PromptServer): void {
  live.push(source);
  registerPromptCommand();
}

/** The source no longer answers `/prompt`; with the last one gone, `/prompt` leaves the command table. */
export function stopServingPrompts(source: PromptServer): void {
  const i = live.indexOf(source);
  if (i >= 0) live.splice(i, 1);
  if (live.length === 0 && registered) {
    registered = false;
    unregisterCommand('prompt');
  }
}

/** Safety cap on `prompts/list` pages. */
const MAX_PAGES = 20;
/** Longest prompt text sent as a message. */
const MAX_PROMPT_CHARS = 20_000;

function serversWithPrompts(): PromptServer[] {
  const byName = new Map<string, PromptServer>();
  for (const s of live)
    if (s.connection.state === 'ready' && s.connection.capabilities?.prompts) byName.set(s.server, s);
  return [...byName.values()];
}

async function listPrompts(source: PromptServer): Promise<Prompt[]> {
  const all: Prompt[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const r = await source.connection.use((c) =>
      c.listPrompts(cursor ? { cursor } : undefined, { timeout: source.connection.config.timeout_seconds * 1000 }),
    );
    all.push(...r.prompts);
    cursor = r.nextCursor;
    if (!cursor) break;
  }
  return all;
}

/** `key=value` pairs; a value may be quoted ("two words"). */
export function parsePromptArgs(
  text: string,
): { ok: true; args: Record<string, string> } | { ok: false; error: string } {
  const args: Record<string, string> = {};
  const re = /\s*([A-Za-z0-9_.-]+)=(?:"((?:[^"\\]|\\.)*)"|(\S*))/y;
  let rest = text.trim();
  while (rest.length) {
    re.lastIndex = 0;
    const m = re.exec(rest);
    if (!m) return { ok: false, error: `expected key=value, found "${rest.split(/\s+/)[0]}"` };
    args[m[1] as string] = m[2] !== undefined ? m[2].replace(/\\(.)/g, '$1') : (m[3] ?? '');
    rest = rest.slice(m[0].length).trim();
  }
  return { ok: true, args };
}

const usage = (spell: string) => `Use ${spell} to list the prompts, ${spell} SERVER NAME key=value … to run one.`;

function describePrompt(p: Prompt): string {
  const args = (p.arguments ?? []).map((a) => `${a.name}${a.required ? '' : '?'}`).join(' ');
  const about = p.description ?? p.title;
  return `- \`${p.name}\`${args ? ` ${args}` : ''}${about ? ` — ${about}` : ''}`;
}

/** The prompt's messages as one user message: text as it is, embedded text resources with their URI. */
export function promptText(result: GetPromptResult): string {
  const parts = result.messages.map((m) => {
    const c = m.content;
    let text: string;
    if (c.type === 'text') text = c.text;
    else if (c.type === 'resource' && 'text' in c.resource && typeof c.resource.text === 'string')
      text = `[resource ${c.resource.uri}]\n${c.resource.text}`;
    else if (c.type === 'resource')
      text = `[resource ${c.resource.uri} (${c.resource.mimeType ?? 'binary'}) not included]`;
    else if (c.type === 'resource_link') text = `[resource link ${c.uri}]`;
    else text = `[${c.type} content not included]`;
    return m.role === 'assistant' ? `(assistant) ${text}` : text;
  });
  const text = parts.join('\n\n');
  return text.length > MAX_PROMPT_CHARS
    ? `${text.slice(0, MAX_PROMPT_CHARS)}\n[prompt cut at ${MAX_PROMPT_CHARS} characters]`
    : text;
}

let registered = false;

function registerPromptCommand(): void {
  if (registered) return;
  registered = true;
  registerCommand({
    name: 'prompt',
    usage: '[server name key=value …]',
    summary: "Run an MCP server's prompt (without arguments: list them)",
    async run(ctx) {
      const spell = ctx.spell('prompt');
      const [, serverName, promptName, argText = ''] = /^(\S+)?(?:\s+(\S+))?\s*([\s\S]*)$/.exec(ctx.args.trim()) ?? [];
      const servers = serversWithPrompts();
      if (!serverName) {
        if (servers.length === 0) return { markdown: 'No connected MCP server offers prompts.' };
        const blocks: string[] = [];
        for (const s of servers) {
          try {
            const prompts = await listPrompts(s);
            blocks.push(`**${s.server}**\n${prompts.length ? prompts.map(describePrompt).join('\n') : '(no prompts)'}`);
          } catch (err) {
            blocks.push(`**${s.server}**\n(could not list: ${errorMessage(err)})`);
          }
        }
        return {
          markdown: `**MCP prompts** (arguments marked ? are optional)\n${blocks.join('\n\n')}\n\n${usage(spell)}`,
        };
      }
      const source = servers.find((s) => s.server === serverName);
      if (!source) {
        const known = servers.map((s) => s.server).join(', ') || 'none';
        return { markdown: `No connected MCP server "${serverName}" with prompts (servers with prompts: ${known}).` };
      }
      if (!promptName) return { markdown: `Name a prompt of ${serverName}. ${usage(spell)}` };
      if (!ctx.ref) return { markdown: 'No conversation here yet. Mention me to start one.' };
      const parsed = parsePromptArgs(argText);
      if (!parsed.ok) return { markdown: `Could not read the arguments: ${parsed.error}. ${usage(spell)}` };
      let prompt: Prompt | undefined;
      try {
        prompt = (await listPrompts(source)).find((p) => p.name === promptName);
      } catch (err) {
        return { markdown: `Could not list the prompts of ${serverName}: ${errorMessage(err)}` };
      }
      if (!prompt) return { markdown: `${serverName} has no prompt "${promptName}". ${usage(spell)}` };
      const missing = (prompt.arguments ?? []).filter((a) => a.required && !(a.name in parsed.args)).map((a) => a.name);
      if (missing.length)
        return {
          markdown: `The prompt ${promptName} needs ${missing.map((m) => `${m}=…`).join(' ')}.\n${describePrompt(prompt)}`,
        };
      const unknown = Object.keys(parsed.args).filter((k) => !(prompt?.arguments ?? []).some((a) => a.name === k));
      if (unknown.length)
        return {
          markdown: `The prompt ${promptName} has no argument ${unknown.join(', ')}.\n${describePrompt(prompt)}`,
        };
      let text: string;
      try {
        const result = await source.connection.use((c) =>
          c.getPrompt(
            { name: promptName, arguments: parsed.args },
            { timeout: source.connection.config.timeout_seconds * 1000 },
          ),
        );
        text = promptText(result);
      } catch (err) {
        return { markdown: `The server ${serverName} refused the prompt: ${errorMessage(err)}` };
      }
      const at = ctx.by.indexOf(':');
      // The prompt is the user's message: it comes in the way every message does.
      const r = await ctx.core.receive({ ...ctx.ref, userId: ctx.by.slice(at + 1), text, direct: !ctx.shared });
      if (r?.status !== 'queued') return { markdown: `The prompt could not be sent (${r?.status ?? 'empty'}).` };
      return { markdown: `▶️ Prompt ${promptName} of ${serverName} sent as your message.` };
    },
  });
}
