/**
 * Configuration: a TOML file plus environment variables (which win), validated by one zod
 * schema. Every key and its default is documented in `config/switchboard.example.toml`.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parse as parseToml } from 'smol-toml';
import { z } from 'zod';
import { deleteAt, findUnknownKey, genericEnv } from './config-keys.js';
import { SwitchboardError } from './errors.js';
import { expandServerVars, McpConfigProblem, mcpSectionSchema, readMcpJson } from './config-mcp.js';

const csv = z.union([z.array(z.union([z.string(), z.number()])), z.string()]).transform((v) => {
  const items = Array.isArray(v) ? v.map(String) : v.split(',');
  return items.map((s) => s.trim()).filter((s) => s.length > 0);
});

/**
 * Telegram user ids. The bot only ever sees numeric ids, so a @username or a name here would let
 * nobody in without a word; it is refused when the configuration is loaded instead.
 */
const telegramIds = csv.pipe(
  z.array(
    z.string().regex(/^\d+$/, {
      error: (issue) =>
        `"${String(issue.input)}" is not a numeric Telegram user id (the bot sees only numeric ids, not @usernames)`,
    }),
  ),
);

/** Booleans; environment variables (strings) may say true/false/1/0/yes/no. */
const boolish = z.union([z.boolean(), z.enum(['true', 'false', '1', '0', 'yes', 'no'])]).transform((v) => {
  if (typeof v === 'boolean') return v;
  return v === 'true' || v === '1' || v === 'yes';
});

/**
 * A number. Only a numeric string (an environment variable) is converted; `true`, `""` and other
 * non-numbers are refused rather than coerced to 1 or 0.
 */
function numeric<T extends z.ZodNumber>(inner: T) {
  return z.preprocess((v) => (typeof v === 'string' && /^\s*-?\d+(\.\d+)?\s*$/.test(v) ? Number(v) : v), inner);
}
const positiveInt = numeric(z.number().int().positive());
const nonNegativeInt = numeric(z.number().int().nonnegative());
const intBetween = (min: number, max: number) => numeric(z.number().int().min(min).max(max));

/** An absolute http(s) URL; `localhost:11434/v1` (no scheme) is refused with an example. */
const httpUrl = z.string().refine((v) => {
  try {
    const u = new URL(v);
    return (u.protocol === 'http:' || u.protocol === 'https:') && u.hostname !== '';
  } catch {
    return false;
  }
}, 'expected an http(s) URL such as http://127.0.0.1:11434/v1');

const ruleSchema = z.object({
  tool: z.string().min(1),
  path: z.string().min(1).optional(),
  action: z.enum(['allow', 'require', 'deny']),
  priority: numeric(z.number().int()).default(0),
});

/** True for a time zone name the runtime knows (IANA, e.g. `Europe/Berlin`). */
export function isTimeZone(name: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

/** Default system prompt: short, because operators are expected to write their own. */
export const DEFAULT_SYSTEM_PROMPT =
  'You are switchboard, a helpful assistant that can use tools. Answer concisely. ' +
  'Use tools when they help; ask the user with ask_user_clarification when a request is ambiguous.';

export const configSchema = z.object({
  llm: z
    .object({
      base_url: httpUrl.optional(),
      api_key: z.string().default(''),
      model: z.string().min(1).default('gpt-4o-mini'),
      max_retries: nonNegativeInt.default(3),
      request_timeout_seconds: positiveInt.default(120),
      max_rounds: positiveInt.default(25),
      context_tokens: positiveInt.default(32_000),
      tokenizer: z.enum(['auto', 'openai', 'estimate']).default('auto'),
      compaction: boolish.default(true),
      vision: z.enum(['auto', 'on', 'off']).default('auto'),
      vision_max_pixels: intBetween(10_000, 40_000_000).default(1_048_576),
      vision_history_turns: nonNegativeInt.default(3),
      vision_model: z.string().min(1).optional(),
      system_prompt: z.string().default(DEFAULT_SYSTEM_PROMPT),
      temperature: numeric(z.number().min(0).max(2)).optional(),
    })
    .prefault({}),
  store: z
    .object({
      database_url: z.string().min(1).default('./data/switchboard.db'),
      pool_size: intBetween(1, 200).default(10),
      lease_seconds: intBetween(2, 600).default(15),
    })
    .prefault({}),
  workspace: z
    .object({
      root: z.string().min(1).default('./workspace'),
      extra_read_roots: csv.default([]),
      extra_write_roots: csv.default([]),
      deny_globs: csv.default(['secrets/**', '.env*', '**/.env*', '**/*.pem', '**/id_rsa*']),
    })
    .prefault({}),
  tools: z
    .object({
      parallel: intBetween(1, 32).default(4),
      deferred: boolish.default(true),
      bash_default_timeout_seconds: intBetween(1, 600).default(120),
      bash_max_output_bytes: positiveInt.default(100_000),
      read_max_bytes: positiveInt.default(256_000),
      web_fetch_max_bytes: positiveInt.default(2_000_000),
      web_fetch_timeout_seconds: positiveInt.default(20),
      math_timeout_ms: positiveInt.default(1_000),
      bash: z
        .object({
          /** Where shell commands run: `auto` (bubblewrap where it works), `bwrap` (required), `off`. */
          sandbox: z.enum(['auto', 'bwrap', 'off']).default('auto'),
          /**
           * The network a sandboxed command gets: `egress` (the internet, not the host, its loopback or
           * private and link-local ranges), `none` (loopback only), `host` (everything the host reaches).
           */
          network: z.enum(['egress', 'none', 'host']).default('egress'),
          /** Most processes (and threads) one command may run at once; 0 = no limit. */
          max_processes: nonNegativeInt.default(256),
          /** Most memory one command may use, MiB; 0 = no limit. */
          max_memory_mb: nonNegativeInt.default(1024),
          /** Largest file a command may write, MiB; 0 = no limit. */
          max_file_size_mb: nonNegativeInt.default(1024),
          /** CPU time each process of a command may use, seconds; 0 = no limit. */
          max_cpu_seconds: nonNegativeInt.default(3600),
          /** Variables given to every command on purpose (the bot's own environment never is). */
          env: z
            .record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'not an environment variable name'), z.string())
            .default({}),
        })
        .prefault({}),
      web_search: z
        .object({
          backend: z.enum(['none', 'searxng', 'tavily', 'brave']).default('none'),
          url: httpUrl.optional(),
          api_key: z.string().optional(),
        })
        .prefault({}),
    })
    .prefault({}),
  approvals: z
    .object({
      timeout_seconds: nonNegativeInt.default(0),
      rules: z.array(ruleSchema).default([]),
    })
    .prefault({}),
  access: z
    .object({
      admins: csv.default([]),
      allowed_users: csv.default([]),
      pairing_code_ttl_minutes: positiveInt.default(60),
      rate_limit_per_minute: positiveInt.default(20),
      daily_tokens_per_user: nonNegativeInt.default(0),
    })
    .prefault({}),
  http: z
    .object({
      port: intBetween(0, 65535).default(8080),
      /** Loopback only by default; the Docker image sets `0.0.0.0` (webhooks need a reachable host or a proxy). */
      host: z.string().default('127.0.0.1'),
      /** Bearer token of `POST /api/notify` and `GET /metrics`; notify is disabled and metrics answer loopback only while unset. */
      api_token: z.string().optional(),
    })
    .prefault({}),
  web: z
    .object({
      /** The web chat and operator console on the HTTP server; with no platform token it is the default channel. */
      enabled: boolish.default(true),
      /** The address people open (behind a reverse proxy: its https URL); unset: `http://<http.host>:<port>`. */
      public_url: httpUrl.optional(),
      link_ttl_minutes: intBetween(1, 7 * 24 * 60).default(15),
      session_days: intBetween(1, 365).default(30),
      max_upload_bytes: positiveInt.default(20 * 1024 * 1024),
      stream_interval_ms: intBetween(50, 10_000).default(250),
    })
    .prefault({}),
  log: z
    .object({
      level: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
    })
    .prefault({}),
  telegram: z
    .object({
      bot_token: z.string().optional(),
      api_root: httpUrl.default('https://api.telegram.org'),
      webhook_url: httpUrl.optional(),
      webhook_secret: z.string().optional(),
      allowed_users: telegramIds.default([]),
      stream_interval_ms: positiveInt.default(1_000),
      /**
       * How a reply streams in private chats: `draft` (Telegram's message drafts; the answer is
       * posted once, complete) or `edit` (post, then edit). Groups always edit.
       */
      streaming: z.enum(['draft', 'edit']).default('draft'),
      /**
       * Answers as rich messages (GitHub-flavoured Markdown with real tables, up to 32 768
       * characters): `auto` (unless the server refuses them; then HTML for the run), `on` (a
       * refusal is an error), `off` (HTML, split at 4096).
       */
      rich_messages: z.enum(['auto', 'on', 'off']).default('auto'),
      /**
       * Notices meant for one person in a group (a refused tap, the flood notice, a pairing code)
       * as ephemeral messages only they see: `auto` (unless the server refuses them; then the
       * old way for the run) or `off` (a tap's alert, a message of the chat).
       */
      ephemeral_notices: z.enum(['auto', 'off']).default('auto'),
      max_download_bytes: positiveInt.default(20 * 1024 * 1024),
      /** Wait below Telegram's send limits; off only for a test server or emulator without them. */
      pace_sends: boolish.default(true),
    })
    .prefault({}),
  slack: z
    .object({
      bot_token: z.string().optional(),
      app_token: z.string().optional(),
      signing_secret: z.string().optional(),
      api_url: httpUrl.optional(),
      allowed_users: csv.default([]),
      team_id: z.string().optional(),
      stream_interval_ms: positiveInt.default(1_500),
      /** Replies stream as Slack's own streamed messages ("native", in threads) or by chat.update. */
      streaming: z.enum(['native', 'update']).default('native'),
      /** A streamed message older than this goes on in a new one (Slack expires streams after ~5 min). */
      stream_rollover_ms: positiveInt.default(240_000),
      /** Tool progress as Block Kit task cards ("auto": where the workspace takes them) or context lines ("off"). */
      task_cards: z.enum(['auto', 'off']).default('auto'),
      /** Long or structured answers as markdown blocks ("auto": where the workspace takes them) or mrkdwn sections ("off"). */
      markdown_blocks: z.enum(['auto', 'off']).default('auto'),
      max_download_bytes: positiveInt.default(50 * 1024 * 1024),
      max_upload_bytes: positiveInt.default(50 * 1024 * 1024),
    })
    .prefault({}),
  discord: z
    .object({
      bot_token: z.string().optional(),
      /** REST base (tests and proxies); the SDK adds the version. */
      api_root: httpUrl.default('https://discord.com/api'),
      /** The gateway WebSocket; unset: the one GET /gateway/bot names. */
      gateway_url: z.string().url().optional(),
      allowed_users: csv
        .pipe(
          z.array(z.string().regex(/^\d+$/, { error: (i) => `"${String(i.input)}" is not a numeric Discord user id` })),
        )
        .default([]),
      stream_interval_ms: positiveInt.default(1_200),
      max_download_bytes: positiveInt.default(25 * 1024 * 1024),
    })
    .prefault({}),
  jobs: z
    .object({
      /** IANA zone for jobs scheduled without one; unset = the machine's zone. */
      timezone: z
        .string()
        .min(1)
        .optional()
        .refine((tz) => tz === undefined || isTimeZone(tz), 'not an IANA time zone (e.g. Europe/Berlin)'),
      missed: z.enum(['run_once', 'skip']).default('run_once'),
      concurrency: intBetween(1, 64).default(4),
      approval_timeout_seconds: positiveInt.default(3_600),
      missed_grace_seconds: nonNegativeInt.default(60),
      resync_seconds: positiveInt.default(30),
    })
    .prefault({}),
  delivery: z
    .object({
      abandon_after_seconds: positiveInt.default(24 * 3600),
    })
    .prefault({}),
  audio: z
    .object({
      transcription_enabled: boolish.default(false),
      transcription_model: z.string().default('whisper-1'),
      speech_enabled: boolish.default(false),
      speech_model: z.string().default('tts-1'),
      speech_voice: z.string().default('alloy'),
    })
    .prefault({}),
  mcp: mcpSectionSchema,
  subagents: z
    .object({
      max_depth: intBetween(0, 5).default(2),
      parallel: intBetween(1, 16).default(4),
    })
    .prefault({}),
});

/** The validated configuration. */
export type Config = z.infer<typeof configSchema>;
/** One approval rule as written in config. */
export type RuleConfig = z.infer<typeof ruleSchema>;

/** The files a configuration was read from (absolute), for what tools must never see. */
export interface ConfigSources {
  file?: string;
  mcpFile?: string;
}

const sourcesOf = new WeakMap<Config, ConfigSources>();

/** The files `config` was loaded from; empty for a configuration built in memory. */
export function configSources(config: Config): ConfigSources {
  return sourcesOf.get(config) ?? {};
}

/** Raised for any bad configuration; the CLI prints `message` alone and exits 2. */
export class ConfigError extends SwitchboardError {
  constructor(message: string, cause?: unknown) {
    super('config_invalid', message, cause);
  }
}

/** Environment variable → dotted config key. Environment wins over the file. */
export const ENV_KEYS: Readonly<Record<string, string>> = {
  OPENAI_API_KEY: 'llm.api_key',
  OPENAI_BASE_URL: 'llm.base_url',
  SWITCHBOARD_MODEL: 'llm.model',
  DATABASE_URL: 'store.database_url',
  SWITCHBOARD_WORKSPACE: 'workspace.root',
  TELEGRAM_BOT_TOKEN: 'telegram.bot_token',
  TELEGRAM_API_ROOT: 'telegram.api_root',
  TELEGRAM_WEBHOOK_URL: 'telegram.webhook_url',
  TELEGRAM_WEBHOOK_SECRET: 'telegram.webhook_secret',
  TELEGRAM_ALLOWED_USERS: 'telegram.allowed_users',
  SLACK_BOT_TOKEN: 'slack.bot_token',
  SLACK_APP_TOKEN: 'slack.app_token',
  SLACK_SIGNING_SECRET: 'slack.signing_secret',
  SLACK_API_URL: 'slack.api_url',
  SLACK_ALLOWED_USERS: 'slack.allowed_users',
  DISCORD_BOT_TOKEN: 'discord.bot_token',
  DISCORD_ALLOWED_USERS: 'discord.allowed_users',
  DISCORD_API_ROOT: 'discord.api_root',
  DISCORD_GATEWAY_URL: 'discord.gateway_url',
  SWITCHBOARD_ADMINS: 'access.admins',
  SWITCHBOARD_HTTP_PORT: 'http.port',
  LOG_LEVEL: 'log.level',
  SWITCHBOARD_API_TOKEN: 'http.api_token',
  SWITCHBOARD_DELIVERY_ABANDON_AFTER_SECONDS: 'delivery.abandon_after_seconds',
};

/** Where the config file comes from: `--config`, else `SWITCHBOARD_CONFIG`, else `./switchboard.toml`. */
export function resolveConfigPath(flag: string | undefined, env: NodeJS.ProcessEnv): string | undefined {
  if (flag) return flag;
  if (env.SWITCHBOARD_CONFIG) return env.SWITCHBOARD_CONFIG;
  const local = path.resolve('switchboard.toml');
  return existsSync(local) ? local : undefined;
}

function setDotted(target: Record<string, unknown>, dotted: string, value: unknown): void {
  const parts = dotted.split('.');
  let node = target;
  for (const part of parts.slice(0, -1)) {
    const next = node[part];
    if (typeof next !== 'object' || next === null || Array.isArray(next)) node[part] = {};
    node = node[part] as Record<string, unknown>;
  }
  node[parts[parts.length - 1] as string] = value;
}

/** Where a configuration problem is: the environment variable that set the key, else the file. */
function describeKey(key: string, envSources: Map<string, string>, file: string | undefined): string {
  const env = envSources.get(key);
  if (env) return `${key} (env ${env})`;
  return file ? `${key} (in ${file})` : key;
}

/** Parse the TOML file; errors name the line and column. */
function readToml(file: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new ConfigError(`config: cannot read ${file}: ${(err as Error).message}`, err);
  }
  try {
    return parseToml(text) as Record<string, unknown>;
  } catch (err) {
    const e = err as Error & { line?: number; column?: number };
    const reason =
      String(e.message)
        .split('\n')[0]
        ?.replace(/^Invalid TOML document: /, '') ?? 'invalid';
    const at = e.line ? `:${e.line}:${e.column ?? 1}` : '';
    throw new ConfigError(`config: ${file}${at}: not valid TOML: ${reason}`, err);
  }
}

/** Options of {@link loadConfig}. */
export interface LoadOptions {
  path?: string;
  env?: NodeJS.ProcessEnv;
  /** An `{"mcpServers": ...}` JSON file (`--mcp-config`); else `SWITCHBOARD_MCP_CONFIG`. */
  mcpConfigPath?: string;
}

/**
 * Load the configuration and report every problem: unknown keys, bad values, missing companions.
 * Each offending key is dropped (its default applies) so the rest can still be checked —
 * `switchboard doctor` runs every check even when the configuration has a fault.
 */
export function inspectConfig(options: LoadOptions = {}): { config: Config | null; problems: string[] } {
  const env = options.env ?? process.env;
  const file = options.path;
  const problems: string[] = [];
  let raw: Record<string, unknown> = {};
  if (file) {
    try {
      raw = readToml(file);
    } catch (err) {
      problems.push((err as Error).message);
    }
  }
  // Bounded: each round drops the key it reports.
  for (
    let round = 0, unknown = findUnknownKey(configSchema, raw);
    unknown && round < 100;
    round++, unknown = findUnknownKey(configSchema, raw)
  ) {
    const name = unknown.table ? `section [${unknown.key}]` : `key ${unknown.key}`;
    const hint = unknown.suggestion
      ? ` — did you mean ${unknown.table ? `[${unknown.suggestion}]` : unknown.suggestion}?`
      : '';
    problems.push(`config: unknown ${name} in ${file}${hint}`);
    deleteAt(raw, unknown.path);
  }
  /** Dotted key → the environment variable that set it (errors blame it only then). */
  const envSources = new Map<string, string>();
  for (const [name, key] of Object.entries(ENV_KEYS)) {
    const value = env[name];
    if (value !== undefined && value !== '') {
      // Trailing slashes are accepted on API roots (grammY rejects them, so strip here once).
      setDotted(raw, key, name.endsWith('_API_ROOT') ? value.replace(/\/+$/, '') : value);
      envSources.set(key, name);
    }
  }
  const generic = genericEnv(configSchema, env);
  for (const u of generic.unknown)
    problems.push(`config: unknown environment variable ${u.name} — did you mean ${u.suggestion}?`);
  for (const { key, name, value } of generic.values) {
    if (value === '') continue; // an empty variable is unset (as with the names above)
    setDotted(raw, key, key.endsWith('.api_root') && typeof value === 'string' ? value.replace(/\/+$/, '') : value);
    envSources.set(key, name);
  }
  const tg = raw.telegram as Record<string, unknown> | undefined;
  if (tg && typeof tg.api_root === 'string') tg.api_root = tg.api_root.replace(/\/+$/, '');
  const mcpFile = options.mcpConfigPath ?? (env.SWITCHBOARD_MCP_CONFIG || undefined);
  const fromJson = mcpFile ? mergeMcpJson(raw, mcpFile, problems) : new Set<string>();
  let config: Config | null = null;
  for (let attempt = 0; attempt < 50 && !config; attempt++) {
    const result = configSchema.safeParse(raw);
    if (result.success) {
      config = result.data;
      break;
    }
    for (const issue of result.error.issues) {
      const key = issue.path.join('.') || '(root)';
      // Issues inside a list (approvals.rules.0.tool) belong to the list's key.
      const owner = [...envSources.keys()].find((k) => key === k || key.startsWith(`${k}.`));
      const jsonServer = issue.path[0] === 'mcp' && issue.path[1] === 'servers' && fromJson.has(String(issue.path[2]));
      const where = owner
        ? `${key} (env ${envSources.get(owner)})`
        : jsonServer
          ? `${mcpFile}: mcpServers.${issue.path.slice(2).join('.')}`
          : describeKey(key, envSources, file);
      problems.push(`config: ${where}: ${issue.message}`);
      // Drop the whole key (a problem inside a list drops the list) so its default applies.
      const firstIndex = issue.path.findIndex((p) => typeof p === 'number');
      deleteAt(raw, owner ? owner.split('.') : firstIndex >= 0 ? issue.path.slice(0, firstIndex) : issue.path);
    }
  }
  if (config) {
    try {
      expandServerVars(config.mcp.servers, env, 'mcp.servers');
    } catch (err) {
      if (!(err instanceof McpConfigProblem)) throw err;
      problems.push(`config: ${err.key}: ${err.message}`);
    }
  }
  if (config) {
    sourcesOf.set(config, {
      ...(file ? { file: path.resolve(file) } : {}),
      ...(mcpFile ? { mcpFile: path.resolve(mcpFile) } : {}),
    });
  }
  if (config?.slack.bot_token && !config.slack.app_token && !config.slack.signing_secret) {
    problems.push(
      'config: slack.signing_secret (or env SLACK_SIGNING_SECRET): required for HTTP mode when slack.app_token is not set',
    );
  }
  if (config?.telegram.webhook_url && !config.telegram.webhook_secret) {
    problems.push(
      'config: telegram.webhook_secret (or env TELEGRAM_WEBHOOK_SECRET): required when telegram.webhook_url is set',
    );
  }
  return { config, problems };
}

/**
 * Load and validate the configuration.
 * @throws ConfigError with one line naming the key and what is wrong (exit code 2).
 */
export function loadConfig(options: LoadOptions = {}): Config {
  const { config, problems } = inspectConfig(options);
  if (problems.length || !config) throw new ConfigError(problems[0] ?? 'config: invalid');
  return config;
}

/** A parsed `DATABASE_URL`: a SQLite file or a PostgreSQL connection string. */
export type DatabaseTarget = { kind: 'sqlite'; file: string } | { kind: 'postgres'; url: string };

/** True for `postgres://` and `postgresql://` URLs. */
export function isPostgresUrl(url: string): boolean {
  return /^postgres(ql)?:\/\//i.test(url);
}

/** Turn `DATABASE_URL` into what to open: a PostgreSQL URL as is, else a SQLite file path. */
export function databaseTarget(url: string): DatabaseTarget {
  return isPostgresUrl(url) ? { kind: 'postgres', url } : { kind: 'sqlite', file: sqlitePathFromUrl(url) };
}

/**
 * Add the servers of an `mcpServers` JSON file to `raw.mcp.servers`; a problem (unreadable file,
 * a name the TOML file already has) is added to `problems`.
 * @returns the names that came from the file (to name it in errors).
 */
function mergeMcpJson(raw: Record<string, unknown>, file: string, problems: string[]): Set<string> {
  let servers: Record<string, unknown>;
  try {
    servers = readMcpJson(file);
  } catch (err) {
    if (!(err instanceof McpConfigProblem)) throw err;
    problems.push(`config: ${err.key}: ${err.message}`);
    return new Set();
  }
  if (typeof raw.mcp !== 'object' || raw.mcp === null) raw.mcp = {};
  const section = raw.mcp as Record<string, unknown>;
  if (typeof section.servers !== 'object' || section.servers === null) section.servers = {};
  const existing = section.servers as Record<string, unknown>;
  const added = new Set<string>();
  for (const [name, entry] of Object.entries(servers)) {
    if (name in existing) {
      problems.push(`config: ${file}: mcpServers.${name}: also defined as [mcp.servers.${name}] in the TOML file`);
      continue;
    }
    existing[name] = entry;
    added.add(name);
  }
  return added;
}

/** Turn `DATABASE_URL` (`sqlite:PATH` or a bare path) into a file path; `:memory:` passes through. */
export function sqlitePathFromUrl(url: string): string {
  if (isPostgresUrl(url)) {
    throw new ConfigError(
      'config: store.database_url (env DATABASE_URL): this command works on a SQLite file; got a postgres URL',
    );
  }
  const bare = url.startsWith('sqlite://')
    ? url.slice('sqlite://'.length)
    : url.startsWith('sqlite:')
      ? url.slice(7)
      : url;
  return bare === ':memory:' ? bare : path.resolve(bare);
}
