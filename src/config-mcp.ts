/**
 * MCP server configuration: the `[mcp]` section of the TOML file and the common
 * `{"mcpServers": {...}}` JSON file (`--mcp-config`, `SWITCHBOARD_MCP_CONFIG`). Pure schema and
 * parsing — no MCP SDK here, so `config.ts` can use it without loading the SDK. It lives beside
 * `config.ts`, not in `src/mcp/`, because `src/mcp/` reads the whole `Config`: the configuration
 * sits below every folder (docs/architecture.md, "Layers").
 */
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { configSection } from './config-section.js';

/** Longest server name: `mcp__<server>__` must leave room for the tool's own name within 64. */
export const MAX_SERVER_NAME = 32;

/** Server names: letters, digits, `_` and `-`, no `__` (the separator of `mcp__<server>__<tool>`). */
export function serverNameProblem(name: string): string | null {
  if (!/^[A-Za-z0-9_-]+$/.test(name)) return 'server names may only use letters, digits, "_" and "-"';
  if (name.length > MAX_SERVER_NAME) return `server names are at most ${MAX_SERVER_NAME} characters`;
  if (name.includes('__') || name.startsWith('_') || name.endsWith('_')) {
    return 'server names may not contain "__" or start or end with "_" (it separates mcp__<server>__<tool>)';
  }
  return null;
}

const stringRecord = z.record(z.string(), z.string());

/** One server as written in TOML (`[mcp.servers.NAME]`) or the JSON file. */
export const mcpServerSchema = z
  .object({
    command: z
      .string()
      .min(1)
      .optional()
      .describe('stdio: the program to run (in its own process group; it dies with switchboard).'),
    args: z.array(z.string()).default([]).describe("stdio: the program's arguments."),
    env: stringRecord
      .default({})
      .describe(`stdio: its environment variables (\${VAR} in a value is taken from the environment).`),
    cwd: z.string().min(1).optional().describe('stdio: the folder it runs in.'),
    url: z.string().url().optional().describe('Streamable HTTP (falls back to SSE for old servers): the endpoint.'),
    headers: stringRecord.default({}).describe(`HTTP: headers sent with each request (\${VAR} as in env).`),
    lazy: z.boolean().default(false).describe('Hidden from the model until it calls activate_tools {groups:[NAME]}.'),
    description: z.string().default('').describe("One line for the system prompt's list of lazy groups."),
    timeout_seconds: z.coerce
      .number()
      .int()
      .positive()
      .default(120)
      .describe('Per-call timeout, seconds; each progress notification from the server restarts it.'),
    enabled: z.boolean().default(true).describe('false: the server is not started (listed as disabled).'),
    roots: z
      .array(z.string().min(1))
      .optional()
      .describe('Roots offered to the server (paths or file:// URIs); unset: the workspace folder.'),
    max_instructions_chars: z.coerce
      .number()
      .int()
      .nonnegative()
      .default(2000)
      .describe("Longest part of the server's instructions added to the system prompt, characters; 0: none."),
    sampling: z
      .enum(['ask', 'allow', 'deny'])
      .default('ask')
      .describe('sampling/createMessage from this server: ask the user each time, allow, or deny.'),
    sampling_model: z
      .string()
      .min(1)
      .optional()
      .describe("Model that answers this server's sampling requests; unset: llm.model."),
  })
  .strict()
  .superRefine((s, ctx) => {
    if (s.command && s.url)
      ctx.addIssue({ code: 'custom', message: 'set either command (stdio) or url (HTTP), not both' });
    if (!s.command && !s.url) ctx.addIssue({ code: 'custom', message: 'set command (stdio) or url (HTTP)' });
  });

/** A validated server entry. */
export type McpServerConfig = z.infer<typeof mcpServerSchema>;

/** Two servers as the generated example shows them (every key of a server, commented out). */
const SERVERS_SAMPLE = `[mcp.servers.files]                # stdio: runs in its own process group, dies with switchboard
command = "node"
args = ["server.js"]
env = { TOKEN = "\${FILES_TOKEN}" }
cwd = "/srv/tools"
lazy = false                       # true: hidden until the model calls activate_tools {groups:["files"]}
description = "read and search the archive"   # the line shown for a lazy group
timeout_seconds = 120              # per call; progress notifications from the server extend it
enabled = true
roots = ["/srv/archive"]           # roots offered to the server (paths or file:// URIs); unset: the workspace
max_instructions_chars = 2000      # the server's instructions join the system prompt, cut at this; 0: left out
sampling = "ask"                   # sampling/createMessage: "ask" the user each time, "allow" or "deny"
sampling_model = "gpt-4o-mini"     # model answering its sampling requests; unset: llm.model

[mcp.servers.search]               # Streamable HTTP (falls back to SSE for old servers)
url = "http://127.0.0.1:3001/mcp"
headers = { Authorization = "Bearer \${SEARCH_TOKEN}" }`;

/** `[mcp]`: the MCP tool servers. */
export const mcpConfig = configSection({
  name: 'mcp',
  schema: z
    .object({
      connect_timeout_seconds: z.coerce
        .number()
        .int()
        .positive()
        .default(10)
        .describe('How long start-up waits for each server before going on without it (it keeps retrying).'),
      max_retry_seconds: z.coerce
        .number()
        .int()
        .positive()
        .default(60)
        .describe('Longest wait between reconnect attempts of a failed or crashed server (backoff doubles up to it).'),
      max_result_chars: z.coerce
        .number()
        .int()
        .positive()
        .default(50_000)
        .describe('Longest tool result text given to the model, characters (the rest is cut with a notice).'),
      sampling_max_tokens: z.coerce
        .number()
        .int()
        .positive()
        .default(1024)
        .describe("Cap on maxTokens of a server's sampling request (sampling/createMessage)."),
      ask_timeout_seconds: z.coerce
        .number()
        .int()
        .positive()
        .default(600)
        .describe(
          "How long a server's question (elicitation) or sampling approval waits in the chat before it is cancelled.",
        ),
      servers: z
        .record(z.string(), mcpServerSchema)
        .default({})
        .superRefine((servers, ctx) => {
          for (const name of Object.keys(servers)) {
            const problem = serverNameProblem(name);
            if (problem) ctx.addIssue({ code: 'custom', path: [name], message: problem });
          }
        })
        .describe('The servers, none by default: one [mcp.servers.NAME] table per server.')
        .meta({ type: 'tables of servers', sample: SERVERS_SAMPLE }),
    })
    .describe(
      `MCP tool servers. Their tools appear as mcp__<server>__<tool> and ask for approval unless a rule
allows them (e.g. tool = "mcp__files__*"). Servers may also come from an {"mcpServers": ...} JSON
file given by --mcp-config PATH or SWITCHBOARD_MCP_CONFIG. \${VAR} in env and headers is taken
from the environment. \`switchboard mcp list\` and /mcp in chat show each server's state.`,
    ),
});

/** Expand `${VAR}` from the environment; an unset variable is a configuration error. */
export function expandVars(value: string, env: NodeJS.ProcessEnv, where: string): string {
  return value.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_m, name: string) => {
    const v = env[name];
    if (v === undefined) throw new McpConfigProblem(where, `\${${name}} is not set in the environment`);
    return v;
  });
}

/** A problem in MCP configuration, with the key it concerns. */
export class McpConfigProblem extends Error {
  constructor(
    readonly key: string,
    message: string,
  ) {
    super(message);
  }
}

/** Apply `${VAR}` expansion to the `env` and `headers` of every server (in place). */
export function expandServerVars(
  servers: Record<string, McpServerConfig>,
  env: NodeJS.ProcessEnv,
  prefix: string,
): void {
  for (const [name, server] of Object.entries(servers)) {
    for (const field of ['env', 'headers'] as const) {
      for (const [k, v] of Object.entries(server[field])) {
        server[field][k] = expandVars(v, env, `${prefix}.${name}.${field}.${k}`);
      }
    }
  }
}

/**
 * Read the common JSON file: `{"mcpServers": {"name": {"command","args","env","cwd"} | {"url","headers"}}}`.
 * Extra per-server keys of other clients (`type`, `disabled`) are understood where they map onto ours.
 * @returns raw server entries for the zod schema.
 * @throws McpConfigProblem naming the file and key.
 */
export function readMcpJson(file: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new McpConfigProblem(file, `cannot read MCP config: ${(err as Error).message}`);
  }
  const servers = (parsed as { mcpServers?: unknown })?.mcpServers;
  if (!servers || typeof servers !== 'object' || Array.isArray(servers)) {
    throw new McpConfigProblem(`${file}: mcpServers`, 'expected an object {"mcpServers": {"name": {...}}}');
  }
  const out: Record<string, unknown> = {};
  for (const [name, entry] of Object.entries(servers as Record<string, unknown>)) {
    if (!entry || typeof entry !== 'object')
      throw new McpConfigProblem(`${file}: mcpServers.${name}`, 'expected an object');
    const { type: _type, disabled, ...rest } = entry as Record<string, unknown>;
    out[name] = disabled === true ? { ...rest, enabled: false } : rest;
  }
  return out;
}
