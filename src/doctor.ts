/**
 * `switchboard doctor`: one line per check (config, database, workspace, HTTP port, model
 * endpoint, shell sandbox with its network and limits, each configured channel's own checks, MCP
 * servers, ripgrep); a non-zero exit when any check fails. It
 * checks what `start` will need and changes nothing: a database is not migrated (the pending
 * migrations are listed), the port is only tried.
 */
import { execFileSync } from 'node:child_process';
import { accessSync, constants, existsSync } from 'node:fs';
import path from 'node:path';
import type { Logger } from 'pino';
import { type DoctorCheck, doctorCheck } from './kit/kind.js';
import { configuredKinds } from './channels/registry.js';
import { type Config, databaseTarget } from './config.js';
import { LlmClient } from './core/llm.js';
import { endpointOf, modelKeyMissing, unlistedModel } from './core/model-check.js';
import { MODEL_NOT_CONFIGURED } from './delivery/notices.js';
import { networkCause } from './errors.js';
import { portCheck } from './doctor-port.js';
import { describeStore, migrationNames, openStore, pendingMigrations } from './store/db.js';
import { closeCgroups } from './tools/cgroups.js';
import { sandboxStatus } from './tools/sandbox.js';
import { limitPlan } from './tools/sandbox-limits.js';
import { closeNamespaces, networkStatus } from './tools/sandbox-network.js';

/** One check's outcome. */
export type CheckResult = DoctorCheck;

const check = doctorCheck;

/**
 * The endpoint answers, and the model is one it lists. An endpoint without a model list gets a
 * warning, not a pass: the model name could not be checked.
 */
async function modelChecks(config: Config, log: Logger): Promise<CheckResult[]> {
  // Nothing to ask: OpenAI's endpoint without a key refuses everything (and the client sends nothing).
  if (modelKeyMissing(config)) return [{ name: 'model endpoint', ok: false, detail: MODEL_NOT_CONFIGURED }];
  const where = endpointOf(config);
  // One try: the doctor reports; retrying with backoff would only make it slow.
  const llm = new LlmClient({ ...config, llm: { ...config.llm, max_retries: 0 } }, log);
  let models: string[] | null;
  try {
    models = await llm.listModels();
  } catch (err) {
    return [{ name: 'model endpoint', ok: false, detail: (err as Error).message }];
  }
  const endpoint: CheckResult = { name: 'model endpoint', ok: true, detail: `${where} answers` };
  const model = config.llm.model;
  if (models === null) {
    return [
      endpoint,
      {
        name: 'model',
        ok: false,
        warnOnly: true,
        detail: `${where} does not list its models; could not check "${model}"`,
      },
    ];
  }
  if (models.includes(model))
    return [endpoint, { name: 'model', ok: true, detail: `"${model}" is listed by the endpoint` }];
  if (models.length === 0) {
    return [
      endpoint,
      { name: 'model', ok: false, warnOnly: true, detail: `${where} lists no models; could not check "${model}"` },
    ];
  }
  return [endpoint, { name: 'model', ok: false, detail: unlistedModel(model, models, where) }];
}

/**
 * Run every check; one failing never stops the others. `configProblems` are the faults found
 * while loading the configuration (each offending key fell back to its default).
 */
export async function runDoctor(config: Config, log: Logger, configProblems: string[] = []): Promise<CheckResult[]> {
  const results: CheckResult[] = configProblems.length
    ? configProblems.map((p) => ({ name: 'config', ok: false, detail: p.replace(/^config: /, '') }))
    : [{ name: 'config', ok: true, detail: 'loaded and valid' }];
  results.push(await check('database', () => databaseCheck(config)));
  results.push(
    await check('workspace', async () => {
      const root = config.workspace.root;
      if (existsSync(root)) {
        accessSync(root, constants.R_OK | constants.W_OK);
        return `${root} is writable`;
      }
      // Not created here (doctor changes nothing): the nearest existing folder must let start create it.
      let parent = path.dirname(path.resolve(root));
      while (!existsSync(parent) && path.dirname(parent) !== parent) parent = path.dirname(parent);
      try {
        accessSync(parent, constants.W_OK);
      } catch {
        throw new Error(`${root} does not exist and ${parent} is not writable, so start cannot create it`);
      }
      return `${root} does not exist yet; start creates it`;
    }),
  );
  if (config.http.port !== 0) results.push(await portCheck(config.http.host, config.http.port));
  const sandbox = sandboxStatus(config);
  results.push({
    name: 'shell sandbox',
    ok: sandbox.mode === 'bwrap',
    detail: sandbox.detail,
    warnOnly: sandbox.mode === 'env',
  });
  if (sandbox.mode !== null) results.push(...(await shellChecks(config, sandbox.mode === 'bwrap')));
  results.push(...(await modelChecks(config, log)));
  // Each configured channel contributes its own checks (see `kit/kind.ts`).
  for (const kind of configuredKinds(config)) if (kind.doctor) results.push(...(await kind.doctor(config)));
  if (Object.keys(config.mcp.servers).length > 0) {
    const { probeServers } = await import('./mcp/index.js');
    for (const s of await probeServers(config, log)) {
      const name = `mcp ${s.name.slice('mcp:'.length)}`;
      if (s.state === 'disabled') results.push({ name, ok: true, detail: 'disabled', warnOnly: true });
      else if (s.state === 'ready')
        results.push({
          name,
          ok: true,
          detail: `${s.kind}, ${s.tools.length} tools${s.refused?.length ? `, ${s.refused.length} refused` : ''}`,
        });
      else results.push({ name, ok: false, detail: `${s.kind}: ${s.error ?? s.state}` });
    }
  }
  results.push(await check('ripgrep', ripgrepCheck, true));
  return results;
}

/**
 * The network commands get and how their limits bind; warnings where the network is the host's or
 * not what was configured, or a limit is not enforced. The probes made a namespace and a cgroup
 * folder: both are gone again when this returns.
 */
async function shellChecks(config: Config, inBwrap: boolean): Promise<CheckResult[]> {
  const net = await networkStatus(config, inBwrap);
  const plan = limitPlan(config, inBwrap);
  await closeNamespaces();
  await closeCgroups();
  const limits = [...plan.layers, ...plan.unbound];
  return [
    { name: 'shell network', ok: !net.warn, detail: net.detail, warnOnly: net.warn },
    {
      name: 'shell limits',
      ok: plan.unbound.length === 0,
      detail: limits.length ? limits.join('; ') : 'none (every tools.bash.max_* is 0)',
      warnOnly: plan.unbound.length > 0,
    },
  ];
}

/**
 * Where the database is and which migrations `migrate` (or `start`) would apply: nothing is
 * applied, and a SQLite file that does not exist yet is not created.
 */
async function databaseCheck(config: Config): Promise<string> {
  const where = describeStore(config.store.database_url);
  const target = databaseTarget(config.store.database_url);
  if (target.kind === 'sqlite' && target.file !== ':memory:' && !existsSync(target.file)) {
    const all = await migrationNames();
    return `${where} does not exist yet: \`switchboard migrate\` (or start) creates it and applies ${all.length} migrations`;
  }
  const db = openStore(config.store);
  try {
    let pending: string[];
    try {
      pending = await pendingMigrations(db);
    } catch (err) {
      throw new Error(`cannot read ${where}: ${networkCause(err)}`);
    }
    if (pending.length === 0) return `${where} (up to date)`;
    return `${where}: ${pending.length} migrations to apply; \`switchboard migrate\` (or start) applies them: ${pending.join(', ')}`;
  } finally {
    await db.destroy();
  }
}

/** ripgrep backs the search tool; without it search still works, more slowly. */
async function ripgrepCheck(): Promise<string> {
  try {
    return execFileSync('rg', ['--version'], { encoding: 'utf8' }).split('\n')[0] ?? 'rg';
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
      throw new Error(
        'ripgrep (rg) is not installed; the search tool falls back to its built-in JavaScript search (slower ' +
          'on large workspaces). Install the ripgrep package to use it',
      );
    }
    throw new Error(`ripgrep (rg) did not run: ${(err as Error).message}`);
  }
}
