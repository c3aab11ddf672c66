/**
 * `switchboard doctor`: one line per check (config, database, workspace, model endpoint,
 * shell sandbox, platform tokens, ripgrep); a non-zero exit when any check fails. Platform checks use plain
 * HTTPS calls (getMe, auth.test) so the doctor needs no SDK.
 */
import { execFileSync } from 'node:child_process';
import { accessSync, constants, mkdirSync } from 'node:fs';
import type { Logger } from 'pino';
import type { Config } from './config.js';
import { LlmClient } from './core/llm.js';
import { describeStore, migrateToLatest, openStore } from './store/db.js';
import { sandboxStatus } from './tools/sandbox.js';

/** One check's outcome. */
export interface CheckResult {
  name: string;
  ok: boolean;
  detail: string;
  /** A warning does not fail the doctor. */
  warnOnly?: boolean;
}

async function check(name: string, fn: () => Promise<string>, warnOnly = false): Promise<CheckResult> {
  try {
    return { name, ok: true, detail: await fn() };
  } catch (err) {
    return { name, ok: false, detail: (err as Error).message, warnOnly };
  }
}

/** The fields the doctor reads from getMe / auth.test replies. */
interface PlatformReply {
  ok?: boolean;
  description?: string;
  error?: string;
  result?: { username?: string };
  user?: string;
  user_id?: string;
  team?: string;
  team_id?: string;
}

async function getJson(url: string, init: RequestInit = {}): Promise<{ status: number; body: PlatformReply }> {
  const res = await fetch(url, { ...init, signal: AbortSignal.timeout(10_000) });
  const body = (await res.json().catch(() => ({}))) as PlatformReply;
  return { status: res.status, body };
}

/**
 * The endpoint answers, and the model is one it lists. An endpoint without a model list gets a
 * warning, not a pass: the model name could not be checked.
 */
async function modelChecks(config: Config, log: Logger): Promise<CheckResult[]> {
  const where = config.llm.base_url ?? 'https://api.openai.com/v1';
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
    return [endpoint, { name: 'model', ok: false, warnOnly: true, detail: `${where} does not list its models; could not check "${model}"` }];
  }
  if (models.includes(model)) return [endpoint, { name: 'model', ok: true, detail: `"${model}" is listed by the endpoint` }];
  if (models.length === 0) {
    return [endpoint, { name: 'model', ok: false, warnOnly: true, detail: `${where} lists no models; could not check "${model}"` }];
  }
  const shown = models.slice(0, 10).join(', ') + (models.length > 10 ? `, … (${models.length} in all)` : '');
  return [endpoint, { name: 'model', ok: false, detail: `"${model}" is not listed by ${where} (it lists: ${shown})` }];
}

/**
 * Run every check; one failing never stops the others. `configProblems` are the faults found
 * while loading the configuration (each offending key fell back to its default).
 */
export async function runDoctor(config: Config, log: Logger, configProblems: string[] = []): Promise<CheckResult[]> {
  const results: CheckResult[] = configProblems.length
    ? configProblems.map((p) => ({ name: 'config', ok: false, detail: p.replace(/^config: /, '') }))
    : [{ name: 'config', ok: true, detail: 'loaded and valid' }];
  results.push(
    await check('database', async () => {
      const file = describeStore(config.store.database_url);
      const db = openStore(config.store);
      try {
        const applied = await migrateToLatest(db);
        return `${file} (${applied.length ? `applied ${applied.length} migrations` : 'up to date'})`;
      } finally {
        await db.destroy();
      }
    }),
  );
  results.push(
    await check('workspace', async () => {
      mkdirSync(config.workspace.root, { recursive: true });
      accessSync(config.workspace.root, constants.R_OK | constants.W_OK);
      return `${config.workspace.root} is writable`;
    }),
  );
  const sandbox = sandboxStatus(config);
  results.push({ name: 'shell sandbox', ok: sandbox.mode === 'bwrap', detail: sandbox.detail, warnOnly: sandbox.mode === 'env' });
  results.push(...(await modelChecks(config, log)));
  if (config.telegram.bot_token) {
    results.push(
      await check('telegram', async () => {
        const { body } = await getJson(`${config.telegram.api_root}/bot${config.telegram.bot_token}/getMe`);
        if (!body.ok) throw new Error(`getMe refused: ${body.description ?? 'unknown error'}`);
        return `bot @${body.result?.username ?? '?'}`;
      }),
    );
  }
  if (config.slack.bot_token) {
    results.push(
      await check('slack', async () => {
        const root = (config.slack.api_url ?? 'https://slack.com/api/').replace(/\/?$/, '/');
        const { body } = await getJson(`${root}auth.test`, {
          method: 'POST',
          headers: { authorization: `Bearer ${config.slack.bot_token}` },
        });
        if (!body.ok) throw new Error(`auth.test refused: ${body.error ?? 'unknown error'}`);
        return `bot ${body.user ?? body.user_id} in ${body.team ?? body.team_id}`;
      }),
    );
  }
  if (Object.keys(config.mcp.servers).length > 0) {
    const { probeServers } = await import('./mcp/index.js');
    for (const s of await probeServers(config, log)) {
      const name = `mcp ${s.name.slice('mcp:'.length)}`;
      if (s.state === 'disabled') results.push({ name, ok: true, detail: 'disabled', warnOnly: true });
      else if (s.state === 'ready') results.push({ name, ok: true, detail: `${s.kind}, ${s.tools.length} tools${s.refused?.length ? `, ${s.refused.length} refused` : ''}` });
      else results.push({ name, ok: false, detail: `${s.kind}: ${s.error ?? s.state}` });
    }
  }
  results.push(
    await check(
      'ripgrep',
      async () => execFileSync('rg', ['--version'], { encoding: 'utf8' }).split('\n')[0] ?? 'rg',
      true,
    ),
  );
  return results;
}
