/**
 * The files switchboard keeps from its own tools whatever the workspace is: the configuration
 * file, the MCP servers file and the SQLite database (with its journal files). They hold the
 * tokens, keys and every conversation; `read_file`, `search` and the file tools refuse them, and
 * the shell sandbox hides them.
 */
import path from 'node:path';
import { type Config, configSources, databaseTarget } from '../config.js';
import { canonicalise, PathPolicy } from './path-policy.js';

/** SQLite keeps these next to the database file while it is open. */
const SQLITE_COMPANIONS = ['', '-wal', '-shm', '-journal'];

/** The SQLite database file of a configuration, or undefined (PostgreSQL, `:memory:`). */
export function sqliteFile(config: Config): string | undefined {
  const target = databaseTarget(config.store.database_url);
  if (target.kind !== 'sqlite' || target.file === ':memory:') return undefined;
  return target.file;
}

/** The folder of the SQLite database (where switchboard keeps its data), if any. */
export function dataFolder(config: Config): string | undefined {
  const file = sqliteFile(config);
  return file ? canonicalise(path.dirname(file)) : undefined;
}

/** A protected file and what it is, for the refusal's wording. */
export interface ProtectedFile {
  abs: string;
  what: string;
}

/** Every file of {@link protectedFiles}, canonical, each with what it is. */
export function protectedFiles(config: Config): ProtectedFile[] {
  const out: ProtectedFile[] = [];
  const sources = configSources(config);
  if (sources.file) out.push({ abs: canonicalise(sources.file), what: "switchboard's configuration file" });
  if (sources.mcpFile) out.push({ abs: canonicalise(sources.mcpFile), what: "switchboard's MCP servers file" });
  const db = sqliteFile(config);
  if (db) {
    const base = canonicalise(db);
    for (const suffix of SQLITE_COMPANIONS) out.push({ abs: `${base}${suffix}`, what: "switchboard's database" });
  }
  return out;
}

/** The workspace path policy of a configuration: its roots and deny globs, and the protected files. */
export function workspacePolicy(config: Config): PathPolicy {
  return new PathPolicy({
    root: config.workspace.root,
    extraReadRoots: config.workspace.extra_read_roots,
    extraWriteRoots: config.workspace.extra_write_roots,
    denyGlobs: config.workspace.deny_globs,
    protectedFiles: protectedFiles(config),
  });
}
