/** The `[tools]` section (with `[tools.bash]` and `[tools.web_search]`): its keys with their documentation. */
import { z } from 'zod';
import { boolish, configSection, httpUrl, intBetween, nonNegativeInt, positiveInt } from './config-section.js';

/** `[tools.bash]`: where and with what limits shell commands run (docs/security.md). */
const bashSchema = z.object({
  sandbox: z
    .enum(['auto', 'bwrap', 'off'])
    .default('auto')
    .describe(
      `Where shell commands (bash, background processes) run (see docs/security.md):
"auto": in bubblewrap (bwrap) where it works — own PID namespace, clean environment, only the
        workspace (and extra_write_roots) writable, switchboard's folder, data folder, config
        file, database and the home folder hidden; else a clean environment only, with a
        warning at start-up. "bwrap": bubblewrap or no shell at all. "off": clean environment only.`,
    ),
  network: z
    .enum(['egress', 'none', 'host'])
    .default('egress')
    .describe(
      `The network of a sandboxed command (see docs/security.md):
"egress": its own network namespace per conversation, with user-mode networking (slirp4netns):
          the internet, but not the host's loopback (the bot, the database, MCP servers), the
          host's own addresses, private (10/8, 172.16/12, 192.168/16, 100.64/10) or link-local
          (169.254/16, cloud metadata) addresses; IPv4 only. Without slirp4netns: "none", with a
          warning at start-up. Background processes of a conversation share its namespace.
"none":   loopback only (the conversation's own). "host": everything the host reaches (warned).
Without bubblewrap (sandbox = "off") the network cannot be isolated.`,
    ),
  max_processes: nonNegativeInt.default(256).describe(
    `Most processes (threads count) one command may run at once; 0 = no limit. Processes and memory
bind through a cgroup where switchboard can write one, else through rlimits (see docs/security.md).`,
  ),
  max_memory_mb: nonNegativeInt.default(1024).describe('Most memory one command may use, MiB; 0 = no limit.'),
  max_file_size_mb: nonNegativeInt
    .default(1024)
    .describe(
      'Largest file a command may write, MiB (a bigger write fails with "File size limit exceeded"); 0 = no limit.',
    ),
  max_cpu_seconds: nonNegativeInt
    .default(3600)
    .describe(
      "CPU time of each process of a command, seconds; 0 = no limit. The whole command's wall time is its timeout.",
    ),
  env: z
    .record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'not an environment variable name'), z.string())
    .default({})
    .describe("Environment variables every command gets on purpose (switchboard's own never are).")
    .meta({ example: '{ GIT_AUTHOR_NAME = "switchboard", GIT_AUTHOR_EMAIL = "bot@example.org" }' }),
});

/** `[tools.web_search]`: the search backend of `web_search`. */
const webSearchSchema = z.object({
  backend: z
    .enum(['none', 'searxng', 'tavily', 'brave'])
    .default('none')
    .describe(
      `"none" (web_search explains it is not configured), "searxng" (needs url),
"tavily" or "brave" (need api_key).`,
    ),
  url: httpUrl
    .optional()
    .describe('The SearXNG instance; for tavily/brave an optional API root override (a proxy).')
    .meta({ example: '"http://127.0.0.1:8888"' }),
  api_key: z.string().optional().describe('The API key of tavily or brave.').meta({ example: '""' }),
});

/** `[tools]`. */
export const toolsConfig = configSection({
  name: 'tools',
  schema: z.object({
    parallel: intBetween(1, 32).default(4).describe('Tool calls of one model round that run at the same time.'),
    deferred: boolish.default(true).describe(
      `Send only the core tools (files, search, shell, web, clarification, memory)
with each request; the rest (jobs, sub-agents, todos/scratchpad, math, man,
clock, attachments) are named in the system prompt and switched on by the
model with activate_tools. false: every tool on every request.`,
    ),
    bash_default_timeout_seconds: intBetween(1, 600)
      .default(120)
      .describe('Default and maximum (600) timeout of a bash command, seconds.'),
    bash_max_output_bytes: positiveInt
      .default(100_000)
      .describe('Output of a bash command kept for the model (head and tail), bytes.'),
    read_max_bytes: positiveInt.default(256_000).describe('Bytes read_file returns at most per call.'),
    web_fetch_max_bytes: positiveInt.default(2_000_000).describe('Largest response web_fetch accepts, bytes.'),
    web_fetch_timeout_seconds: positiveInt.default(20).describe('Timeout of one web_fetch, seconds.'),
    math_timeout_ms: positiveInt.default(1_000).describe('Time limit of one math evaluation, milliseconds.'),
    bash: bashSchema.prefault({}),
    web_search: webSearchSchema.prefault({}),
  }),
});
