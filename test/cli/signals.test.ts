/**
 * SIGTERM against exactly what users start: the Dockerfile's ENTRYPOINT + CMD (tini, then node)
 * and the README's `npm start`. The process exits 0 and leaves nothing running.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startScriptedLlm, type ScriptedLlm } from '../emulators/llm.js';
import { startSlackEmulator, type SlackEmulator } from '../emulators/slack.js';
import { waitFor } from '../helpers/harness.js';
import { skipped } from '../helpers/skips.js';
import { skipReason } from '../helpers/system-tools.js';
import { testDatabaseUrl } from '../helpers/test-db.js';

const ROOT = path.resolve(import.meta.dirname, '../..');

// ps walks the process tree to prove nothing is left running; tini is the image's init.
const noPs = skipReason('ps', 'the signal tests list the process tree with ps');
const noTini = noPs ?? skipReason('tini', 'the Docker image runs node under tini');

let llm: ScriptedLlm;
let emu: SlackEmulator;
let dir: string;
beforeAll(async () => {
  llm = await startScriptedLlm();
  emu = await startSlackEmulator();
  dir = mkdtempSync(path.join(os.tmpdir(), 'sb-signals-'));
  mkdirSync(path.join(dir, 'ws'));
});
afterAll(async () => {
  await emu.close();
  await llm.close();
  rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
});

/** The exec-form (JSON array) value of a Dockerfile instruction in the final stage. */
function dockerInstruction(dockerfile: string, name: string): string[] {
  const finalStage = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));
  const line = finalStage.split('\n').find((l) => l.startsWith(`${name} `));
  if (!line) throw new Error(`no ${name} in the final stage`);
  return JSON.parse(line.slice(name.length + 1)) as string[];
}

/** Every descendant pid of `pid` (ps walks the tree). */
function descendants(pid: number): number[] {
  const out = execFileSync('ps', ['-eo', 'pid=,ppid='], { encoding: 'utf8' });
  const children = new Map<number, number[]>();
  for (const row of out.trim().split('\n')) {
    const [p, pp] = row.trim().split(/\s+/).map(Number) as [number, number];
    children.set(pp, [...(children.get(pp) ?? []), p]);
  }
  const all: number[] = [];
  const walk = (p: number) => {
    for (const c of children.get(p) ?? []) {
      all.push(c);
      walk(c);
    }
  };
  walk(pid);
  return all;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Start `argv` with a Slack channel against the emulator, wait until started, SIGTERM it. */
async function startAndTerminate(
  argv: string[],
  name: string,
  whileRunning: (port: number) => Promise<void> = async () => {},
): Promise<{ code: number | null; ms: number; tree: number[] }> {
  const [cmd, ...args] = argv as [string, ...string[]];
  const child = spawn(cmd, args, {
    cwd: ROOT,
    env: {
      ...process.env,
      OPENAI_BASE_URL: llm.url,
      DATABASE_URL: testDatabaseUrl(dir, name),
      SWITCHBOARD_WORKSPACE: path.join(dir, 'ws'),
      SLACK_BOT_TOKEN: 'xoxb-emulator',
      SLACK_SIGNING_SECRET: emu.app.signingSecret,
      SLACK_API_URL: emu.apiUrl,
      SWITCHBOARD_HTTP_PORT: '0',
      SWITCHBOARD__HTTP__HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  let port = 0;
  const stderr: string[] = [];
  createInterface({ input: child.stderr }).on('line', (line) => {
    stderr.push(line);
    if (line.includes('"switchboard started"')) port = (JSON.parse(line) as { port: number }).port;
  });
  child.stdout.resume();
  await waitFor(() => port, `${name}: the started log line (${stderr.join('\n')})`, 20_000);
  await whileRunning(port);
  const tree = descendants(child.pid as number);
  expect(tree.length).toBeGreaterThan(0);
  const t = Date.now();
  child.kill('SIGTERM');
  const code = await exited;
  const ms = Date.now() - t;
  try {
    await waitFor(() => tree.every((p) => !alive(p)), `${name}: every process of the tree gone`, 5_000);
  } finally {
    for (const p of tree.filter(alive)) process.kill(p, 'SIGKILL'); // a failed run leaves no orphans
  }
  return { code, ms, tree };
}

describe.skipIf(noPs !== undefined)(`SIGTERM reaches node${skipped(noPs)}`, () => {
  it.skipIf(noTini !== undefined)(
    `the Dockerfile runs node under tini (not npm) and the container command exits 0 on SIGTERM${skipped(noTini)}`,
    async () => {
      const dockerfile = readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8');
      const entrypoint = dockerInstruction(dockerfile, 'ENTRYPOINT');
      const cmd = dockerInstruction(dockerfile, 'CMD');
      expect(entrypoint[0]).toBe('/usr/bin/tini');
      expect([...entrypoint, ...cmd]).not.toContain('npm');
      const argv = [...entrypoint, ...cmd].map((a) => a.replace(/^\/app\//, `${ROOT}/`));
      const healthcheck = JSON.parse(
        /HEALTHCHECK[^\n]*\\\n\s*CMD (\[.*\])/.exec(dockerfile)?.[1] ?? 'null',
      ) as string[];
      const r = await startAndTerminate(argv, 'docker', async (port) => {
        // The image's HEALTHCHECK command, run against the live process.
        const [cmd0, ...args] = healthcheck as [string, ...string[]];
        const run = (env: Record<string, string>) => {
          const c = spawn(
            cmd0 === 'node' ? process.execPath : cmd0,
            args.map((a) => a.replace(/^\/app\//, `${ROOT}/`)),
            { env: { PATH: process.env.PATH ?? '', ...env }, stdio: 'ignore' },
          );
          return new Promise((resolve) => c.on('exit', resolve));
        };
        const check = (p: number) => run({ SWITCHBOARD_HTTP_PORT: String(p) });
        expect(await check(port)).toBe(0);
        expect(await check(1)).toBe(1); // nothing listens there: unhealthy
        // The port set only in the config file counts too.
        const toml = path.join(dir, 'health.toml');
        writeFileSync(toml, `[http]\nport = ${port}\n`);
        expect(await run({ SWITCHBOARD_CONFIG: toml })).toBe(0);
        writeFileSync(toml, '[http]\nport = 1\n');
        expect(await run({ SWITCHBOARD_CONFIG: toml })).toBe(1);
      });
      expect(r.code).toBe(0);
      expect(r.ms).toBeLessThan(10_000);
    },
    60_000,
  );

  it('`npm start` passes SIGTERM on to node: npm exits 0 and node is gone', async () => {
    const r = await startAndTerminate(['npm', 'start'], 'npm');
    expect(r.code).toBe(0);
    expect(r.ms).toBeLessThan(10_000);
  }, 60_000);
});

describe('Dockerfile', () => {
  it('keeps the compiler toolchain out of the final image and checks /healthz', () => {
    const dockerfile = readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8');
    const finalStage = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));
    expect(dockerfile.match(/^FROM /gm)?.length).toBeGreaterThanOrEqual(2);
    for (const tool of ['g++', 'make', 'python3', 'build-essential'])
      expect(finalStage).not.toMatch(new RegExp(`install[^\\n]*\\s${tool.replace('+', '\\+')}(\\s|$)`));
    expect(finalStage).toMatch(/COPY --from=\w+ \/app\/node_modules/);
    expect(finalStage).toMatch(/HEALTHCHECK[^\n]*\\\n\s*CMD \[[^\n]*"healthcheck"\]/); // `switchboard healthcheck` asks /healthz
    expect(finalStage).toContain('man-db');
  });

  it('runs compiled JavaScript from dist/ in the final stage, without the TypeScript sources', () => {
    const dockerfile = readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8');
    const finalStage = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));
    expect(dockerInstruction(dockerfile, 'ENTRYPOINT')).toContain('/app/dist/bundle/src/cli.js');
    expect(finalStage).toMatch(/COPY --from=\w+ \/app\/dist/);
    expect(finalStage).not.toMatch(/^COPY (src|plugins|migrations) /m);
    expect(dockerfile.slice(0, dockerfile.lastIndexOf('\nFROM '))).toMatch(/npm prune --omit=dev/);
  });
});
