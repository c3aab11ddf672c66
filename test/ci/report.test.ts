/**
 * `.ci/run` reads vitest's JSON report, its exit status and the skip reporter's list through
 * `.ci/report.cjs`: a run that vitest failed, a test skipped for a tool CI installs, or a report
 * that is missing must each count as a failure; a flaky test is named.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');
const dir = mkdtempSync(path.join(os.tmpdir(), 'sb-ci-report-'));
afterAll(() => rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 }));

let n = 0;
function write(value: unknown): string {
  const file = path.join(dir, `f${++n}.json`);
  writeFileSync(file, JSON.stringify(value));
  return file;
}

const file = path.join(ROOT, 'test/x.test.ts');
function report(statuses: Record<string, 'passed' | 'failed' | 'skipped'>) {
  const results = Object.entries(statuses).map(([fullName, status]) => ({
    fullName,
    status,
    failureMessages: status === 'failed' ? ['AssertionError: boom'] : [],
  }));
  return {
    success: results.every((r) => r.status !== 'failed'),
    numPassedTests: results.filter((r) => r.status === 'passed').length,
    numPendingTests: results.filter((r) => r.status === 'skipped').length,
    numTodoTests: 0,
    testResults: [
      {
        name: file,
        status: results.some((r) => r.status === 'failed') ? 'failed' : 'passed',
        assertionResults: results,
      },
    ],
  };
}

/** Runs `report.cjs count`; returns its lines and the "passed failed skipped" of the last one. */
function count(args: string[]): { out: string; passed: number; failed: number; skipped: number } {
  const r = spawnSync(process.execPath, [path.join(ROOT, '.ci/report.cjs'), 'count', 'SQLite', ...args], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  expect(r.status).toBe(0);
  const lines = r.stdout.trim().split('\n');
  const [passed, failed, skipped] = (lines.at(-1) as string).split(' ').map(Number) as [number, number, number];
  return { out: lines.slice(0, -1).join('\n'), passed, failed, skipped };
}

const noSkips = () => write({ skipped: [], unhandledErrors: 0 });

describe('.ci/report.cjs', () => {
  it('a clean run counts its tests and nothing failed', () => {
    const r = count([noSkips(), write(report({ a: 'passed', b: 'passed' })), '0']);
    expect([r.passed, r.failed, r.skipped]).toEqual([2, 0, 0]);
  });

  it('vitest exiting non-zero with every test passed is a failure (an error outside the tests)', () => {
    const r = count([noSkips(), write(report({ a: 'passed' })), '1']);
    expect(r.failed).toBe(1);
    expect(r.out).toContain('vitest exited 1 without a failed test');
  });

  it('errors outside the tests fail even when the failed file passes when run again', () => {
    const skips = write({ skipped: [], unhandledErrors: 2 });
    const r = count([skips, write(report({ a: 'failed' })), '1', write(report({ a: 'passed' })), '0']);
    expect(r.failed).toBe(2);
    expect(r.out).toContain('FLAKY (failed, then passed when its file ran again): test/x.test.ts > a');
    expect(r.out).toContain('2 error(s) outside the tests');
  });

  it('a test failing twice is FAILED with its message; one passing the second time is FLAKY and counted as passed', () => {
    const r = count([
      noSkips(),
      write(report({ a: 'failed', b: 'failed', c: 'passed' })),
      '1',
      write(report({ a: 'passed', b: 'failed' })),
      '1',
    ]);
    expect([r.passed, r.failed]).toEqual([2, 1]);
    expect(r.out).toContain('FAILED (run again: failed): test/x.test.ts > b');
    expect(r.out).toContain('AssertionError: boom');
    expect(r.out).toContain('1 FLAKY');
  });

  it('the log’s tail names each skipped test once with the halves that skipped it, and the failures last', () => {
    const summaries = [
      'SQLite: 1 skipped:',
      'SQLite skipped: test/a.test.ts > needs a server',
      '    PostgreSQL only',
      'SQLite FAILED (run again: failed): test/b.test.ts > breaks',
      '    AssertionError: boom',
      'SQLite, Node 24: 1 skipped:',
      'SQLite, Node 24 skipped: test/a.test.ts > needs a server',
      '    PostgreSQL only',
      'SQLite, Node 24 SKIPPED IN CI (a failure: .ci/run installs the tool): test/c.test.ts > rg',
      '    ripgrep is not installed: x',
    ].join('\n');
    const r = spawnSync(process.execPath, [path.join(ROOT, '.ci/report.cjs'), 'tail'], {
      cwd: ROOT,
      encoding: 'utf8',
      input: summaries,
    });
    expect(r.status).toBe(0);
    expect(r.stdout.trim().split('\n')).toEqual([
      'skipped (SQLite; SQLite, Node 24): test/a.test.ts > needs a server',
      '    PostgreSQL only',
      'SQLite FAILED (run again: failed): test/b.test.ts > breaks',
      '    AssertionError: boom',
      'SQLite, Node 24 SKIPPED IN CI (a failure: .ci/run installs the tool): test/c.test.ts > rg',
      '    ripgrep is not installed: x',
    ]);
  });

  it('a missing report is a failure', () => {
    const r = count([noSkips(), path.join(dir, 'nothing.json'), '1']);
    expect([r.passed, r.failed]).toEqual([0, 1]);
    expect(r.out).toContain('no report');
  });

  it('names each skip with its reason, and a skip for a tool CI installs is a failure', () => {
    const skips = write({
      skipped: [
        {
          file: 'test/x.test.ts',
          name: 'pg only',
          reason: 'PostgreSQL only, SWITCHBOARD_TEST_DATABASE_URL is not set: several instances',
        },
        {
          file: 'test/x.test.ts',
          name: 'signals',
          reason: 'tini is not installed: the Docker image runs node under tini',
        },
      ],
      unhandledErrors: 0,
    });
    const r = count([skips, write(report({ a: 'passed', 'pg only': 'skipped', signals: 'skipped' })), '0']);
    expect([r.passed, r.failed, r.skipped]).toEqual([1, 1, 2]);
    expect(r.out).toContain('skipped: test/x.test.ts > pg only\n    PostgreSQL only');
    expect(r.out).toContain('SKIPPED IN CI (a failure: .ci/run installs the tool): test/x.test.ts > signals');
  });
});

describe('.ci/run', () => {
  const script = readFileSync(path.join(ROOT, '.ci/run'), 'utf8');

  it('installs every system tool the tests need and stops when an install fails', () => {
    for (const pkg of [
      'ripgrep',
      'man-db',
      'tini',
      'procps',
      'chromium',
      'bubblewrap',
      'slirp4netns',
      'iproute2',
      'postgresql',
    ])
      expect(script).toContain(`m+=(${pkg})`);
    expect(script).toMatch(
      /apt-get update[^\n]*\|\| ![^\n]*apt-get install[^\n]*; then\n\s*echo "FAILED: apt-get could not install/,
    );
    expect(script).not.toMatch(/warning: apt-get/);
    expect(script).toContain('export CI=true');
  });

  it('hands vitest’s exit status and the skip list to report.cjs, and ends with "N passed, N failed"', () => {
    expect(script).toContain('--reporter=./test/reporters/skips.ts');
    expect(script).toMatch(/report\.cjs count "\$label" "\$skips" "\$report" "\$status"/);
    expect(script.trim().split('\n').slice(-2)[0]).toBe(
      'echo "$((sp + pp + lp + cp)) passed, $((sf + pf + lf + cf)) failed"',
    );
  });

  it('runs the contention suite on both stores after the halves, counted in the last line and failing the run', () => {
    // After every half has ended (the halves run side by side): the hog alone is the contention.
    const halves = script.search(/wait "\$\{side_pids\[\$i\]\}"/);
    expect(halves).toBeGreaterThan(0);
    expect(script.indexOf('run_contention SQLite', halves)).toBeGreaterThan(halves);
    expect(script).toMatch(/run_contention PostgreSQL [^\n]*SWITCHBOARD_TEST_DATABASE_URL=/);
    expect(script).toContain('npm run --silent test:contention -- --reporter=default --reporter=json');
    expect(script).toMatch(/report\.cjs count "Contention, \$label" "\$skips" "\$report" "\$status"/);
    // Its skips are named and counted with the others; a run that never reports is a failure.
    expect(script).toContain('echo "$((ss + ps_ + ls_ + cs)) skipped (named above)"');
    expect(script).toMatch(/\|\| \{ a=0 b=1 c=0; echo "FAILED: the contention run/);
    expect(script).toContain('|| [ "$cf" -ne 0 ]; then exit 1; fi');
    const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
    expect(pkg.scripts['test:contention']).toBe('node --import tsx test/contention/run.ts');
    expect(pkg.scripts.test).toBe('vitest run');
  });

  it('runs the whole suite once on each LTS line the README names: PostgreSQL on 22, SQLite on the others, each in its own copy', () => {
    expect(script).toContain('echo "=== tests against $label on Node $(node --version)"');
    expect(script).toMatch(/^NODE_LINES=\(22 24\)$/m);
    expect(script).toMatch(/^PG_LINE=22$/m);
    expect(script).toMatch(/^declare -A NODE_HEADERS=\(\[24\]=24\.18\.1\)$/m);
    // A line other than the machine's own runs in a copy with that line's runtime first on PATH.
    expect(script).toMatch(/\.ci\/node-line "\$line" "\$\{NODE_HEADERS\[\$line\]:-\}" "\$tmp\/node\$line"/);
    expect(script).toMatch(/cd "\$tmp\/node\$line\/project" && PATH="\$line_bin:\$PATH" "\$@"/);
    expect(script).toContain('side_by_side pg on_line "$PG_LINE" pg_half');
    expect(script).toContain('side_by_side "node$line" on_line "$line" node_line_half "$line"');
    expect(script).toMatch(/run_half "SQLite, Node \$line"/);
    // A Node-line half that fails or never reports fails the run.
    expect(script).toContain('|| [ "$lf" -ne 0 ] ||');
    expect(script).toMatch(/\|\| \{ a=0 b=1 c=0;/);
    const nodeLine = readFileSync(path.join(ROOT, '.ci/node-line'), 'utf8');
    expect(nodeLine).toContain('npm_config_nodedir="$nodedir" npm ci');
    expect(nodeLine).toContain('--exclude=./node_modules');
  });
});

describe('skips in the suite', () => {
  /** Every test file under test/. */
  function testFiles(d: string): string[] {
    return readdirSync(d, { withFileTypes: true }).flatMap((e) => {
      const p = path.join(d, e.name);
      if (e.isDirectory()) return testFiles(p);
      return e.name.endsWith('.test.ts') ? [p] : [];
    });
  }

  it('every conditional skip carries its reason in the name, and nothing is skipped unconditionally or focused', () => {
    const offenders: string[] = [];
    for (const f of testFiles(path.join(ROOT, 'test'))) {
      const lines = readFileSync(f, 'utf8').split('\n');
      lines.forEach((line, i) => {
        const where = `${path.relative(ROOT, f)}:${i + 1}`;
        // The formatter may put the name on the lines after `skipIf(…)(`: read the call's first three lines.
        const call = lines.slice(i, i + 3).join(' ');
        if (/\b(describe|it|test)\.skipIf\(/.test(line) && !call.includes('skipped('))
          offenders.push(`${where} skipIf without skipped(reason) in its name`);
        if (/\b(describe|it|test)\.(skip|only|todo)\(/.test(line)) offenders.push(`${where} ${line.trim()}`);
      });
    }
    expect(offenders).toEqual([]);
  });
});
