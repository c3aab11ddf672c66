/**
 * System tools that some tests need (a browser, the shell sandbox and its network helper, tini,
 * ripgrep, man, ps, PostgreSQL's server). On a
 * developer's machine without one, those tests skip with a one-line reason; in CI (`CI=true`),
 * where `.ci/run` installs them all, a missing tool fails instead, so a green CI run never hides a
 * test that did not run.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { it } from 'vitest';

/** The tools the suite knows how to look for. */
export type SystemToolName =
  | 'chromium'
  | 'bwrap'
  | 'slirp4netns'
  | 'ip'
  | 'postgres'
  | 'tini'
  | 'rg'
  | 'man'
  | 'ps'
  | 'script';

/** Whether a command answers `--version` (or the named probe) with exit 0. */
function answers(command: string, args: string[] = ['--version']): boolean {
  const res = spawnSync(command, args, { stdio: 'ignore', timeout: 10_000 });
  return res.status === 0;
}

/** Where Chromium is: `SWITCHBOARD_TEST_CHROMIUM`, else Debian's and common paths. */
export function chromiumPath(): string | undefined {
  const candidates = [
    process.env.SWITCHBOARD_TEST_CHROMIUM,
    '/usr/bin/chromium',
    '/usr/bin/chromium-browser',
    '/usr/bin/google-chrome',
  ];
  return candidates.find((p): p is string => typeof p === 'string' && p !== '' && existsSync(p));
}

/** The newest PostgreSQL server's bin folder (Debian: /usr/lib/postgresql/<version>/bin), if installed. */
export function postgresBin(): string | undefined {
  let versions: string[];
  try {
    versions = readdirSync('/usr/lib/postgresql');
  } catch {
    return undefined;
  }
  const found = versions
    .filter((v) => /^\d+$/.test(v) && existsSync(`/usr/lib/postgresql/${v}/bin/initdb`))
    .sort((a, b) => Number(a) - Number(b));
  return found.length ? `/usr/lib/postgresql/${found.at(-1)}/bin` : undefined;
}

const probes: Record<SystemToolName, () => boolean> = {
  chromium: () => chromiumPath() !== undefined,
  // bwrap must also be able to make namespaces here (containers may forbid it).
  bwrap: () => answers('bwrap', ['--unshare-all', '--share-net', '--dev-bind', '/', '/', 'true']),
  // The shell sandbox's network (tools.bash.network = "egress"), and iproute2 which sets its rules.
  slirp4netns: () => answers('slirp4netns', ['--version']),
  ip: () => answers('ip', ['-V']),
  postgres: () => postgresBin() !== undefined,
  tini: () => existsSync('/usr/bin/tini') || answers('tini'),
  rg: () => answers('rg'),
  man: () => answers('man', ['--version']),
  ps: () => answers('ps', ['-p', String(process.pid)]),
  // util-linux's `script` runs a command on a pseudo-terminal (Debian: bsdutils, always installed).
  script: () => answers('script', ['--version']),
};

const cache = new Map<SystemToolName, boolean>();

/** Whether `tool` is usable on this machine (probed once per test file). */
export function hasSystemTool(tool: SystemToolName): boolean {
  let found = cache.get(tool);
  if (found === undefined) {
    found = probes[tool]();
    cache.set(tool, found);
  }
  return found;
}

/** True where a missing tool must fail rather than skip: CI installs every one of them. */
export const mustHaveSystemTools = process.env.CI === 'true';

/**
 * The reason to skip tests that need `tool`, or undefined when it is there. In CI a missing tool
 * also registers a failing test named after it (call this inside a `describe` or at file level).
 *
 * @example
 * const noBrowser = skipReason('chromium', 'the web chat tests drive a real browser');
 * describe.skipIf(noBrowser !== undefined)(`web chat${noBrowser ? ` (skipped: ${noBrowser})` : ''}`, () => { … });
 */
export function skipReason(tool: SystemToolName, why: string): string | undefined {
  if (hasSystemTool(tool)) return undefined;
  const reason = `${tool} is not installed: ${why}`;
  if (mustHaveSystemTools) {
    it(`CI has ${tool}`, () => {
      throw new Error(`${reason} — .ci/run installs it, so it must be here in CI`);
    });
  }
  return reason;
}
