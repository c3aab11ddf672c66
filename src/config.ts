/**
 * Configuration: a TOML file plus environment variables (which win), validated by one zod schema
 * composed from the sections of `config-sections.ts` (each declared with its keys' documentation,
 * environment names and cross-field checks). `config/switchboard.example.toml` and
 * `docs/configuration.md` are generated from it (`npm run config-docs`).
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parse as parseToml } from 'smol-toml';
import { z } from 'zod';
import { deleteAt, findUnknownKey, genericEnv } from './config-keys.js';
import { SwitchboardError } from './errors.js';
import { expandServerVars, McpConfigProblem, readMcpJson } from './config-mcp.js';
import type { ConfigSection } from './config-section.js';
import { configSections } from './config-sections.js';

export { DEFAULT_SYSTEM_PROMPT, isTimeZone, type RuleConfig } from './config-core.js';

type Sections = typeof configSections;
/** Each section's schema under its name; a missing table is `{}`, so every default applies. */
type ConfigShape = { [S in Sections[number] as S['name']]: z.ZodPrefault<S['schema']> };

/** The whole configuration: the sections of `config-sections.ts`, composed. */
export const configSchema = z.object(
  Object.fromEntries(configSections.map((s) => [s.name, (s.schema as z.ZodObject).prefault({})])),
) as unknown as z.ZodObject<ConfigShape>;

/** The validated configuration. */
export type Config = z.infer<typeof configSchema>;

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

/** Environment variable → dotted config key, from the sections' short names. Environment wins over the file. */
export const ENV_KEYS: Readonly<Record<string, string>> = Object.fromEntries(
  configSections.flatMap((s) => Object.entries(s.env ?? {}).map(([name, key]) => [name, `${s.name}.${key}`])),
);

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
      setDotted(raw, key, value);
      envSources.set(key, name);
    }
  }
  const generic = genericEnv(configSchema, env);
  for (const u of generic.unknown)
    problems.push(`config: unknown environment variable ${u.name} — did you mean ${u.suggestion}?`);
  for (const { key, name, value } of generic.values) {
    if (value === '') continue; // an empty variable is unset (as with the names above)
    setDotted(raw, key, value);
    envSources.set(key, name);
  }
  // Trailing slashes are accepted on every section's API root, from the file or the environment
  // (grammY rejects them, so strip here once).
  for (const section of Object.values(raw)) {
    const table = section as Record<string, unknown> | null;
    if (table && typeof table === 'object' && typeof table.api_root === 'string')
      table.api_root = table.api_root.replace(/\/+$/, '');
  }
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
  if (config) {
    const sections = config as unknown as Record<string, unknown>;
    for (const section of configSections as readonly ConfigSection[])
      problems.push(...(section.check?.(sections[section.name] as Record<string, unknown>) ?? []));
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
