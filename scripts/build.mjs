#!/usr/bin/env node
/**
 * Compiles the TypeScript sources (src/, plugins/, migrations/) into dist/ with `tsc`, then
 * bundles that into dist/bundle/ (scripts/bundle.mjs), which is what the `switchboard` command runs,
 * and builds the web chat's client into dist/web/ (scripts/build-web.mjs).
 *
 * `npm ci` runs it through the `prepare` script; `bin/switchboard.js` runs it when dist/ is
 * missing or older than the sources beside it, so a fresh clone, an `--ignore-scripts` install
 * and an edited checkout all start the code that is there. `--if-stale` builds only then.
 * Plain JavaScript so it runs before anything is compiled.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const DIST = path.join(ROOT, 'dist');
/** What `bin/switchboard.js` imports: the bundled command line (start-up loads a few files, not a thousand). */
export const ENTRY = path.join(DIST, 'bundle', 'src', 'cli.js');
const STAMP = path.join(DIST, '.build-stamp');
const LOCK = path.join(ROOT, '.dist-build.lock');
const SOURCE_DIRS = ['src', 'plugins', 'migrations', 'web'];
const SOURCE_FILES = [
  'tsconfig.json',
  'tsconfig.build.json',
  'package.json',
  'scripts/bundle.mjs',
  'scripts/build-web.mjs',
];

function newestMtime(target) {
  let st;
  try {
    st = fs.statSync(target);
  } catch {
    return 0;
  }
  if (!st.isDirectory()) return st.mtimeMs;
  let newest = st.mtimeMs; // a deleted file shows as a newer directory
  for (const name of fs.readdirSync(target)) newest = Math.max(newest, newestMtime(path.join(target, name)));
  return newest;
}

/** True when the sources are present and dist/ is missing or older than any of them. */
export function isStale() {
  if (!fs.existsSync(path.join(ROOT, 'src'))) return !fs.existsSync(ENTRY); // an image without sources: dist is the truth
  let stamp;
  try {
    stamp = fs.statSync(STAMP).mtimeMs;
  } catch {
    return true;
  }
  if (!fs.existsSync(ENTRY)) return true;
  return [...SOURCE_DIRS, ...SOURCE_FILES].some((p) => newestMtime(path.join(ROOT, p)) > stamp);
}

/** Removes compiled files whose source was deleted (an incremental `tsc` leaves them behind). */
function pruneOrphans(dir, srcDir) {
  if (!fs.existsSync(dir)) return;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const out = path.join(dir, entry.name);
    const src = path.join(srcDir, entry.name);
    if (entry.isDirectory()) {
      if (!fs.existsSync(src)) fs.rmSync(out, { recursive: true, force: true });
      else pruneOrphans(out, src);
      continue;
    }
    const base = entry.name.replace(/\.map$/, '');
    const candidates = base.endsWith('.js') ? [base.replace(/\.js$/, '.ts'), base] : [base];
    if (!candidates.some((c) => fs.existsSync(path.join(srcDir, c)))) fs.rmSync(out, { force: true });
  }
}

/** The TypeScript compiler's entry point, or null when typescript is not installed. */
function compilerPath() {
  try {
    return createRequire(path.join(ROOT, 'package.json')).resolve('typescript/bin/tsc');
  } catch {
    return null;
  }
}

function sleep(ms) {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/** Takes the build lock (a directory: mkdir is atomic), waiting out another build for up to 5 minutes. */
function withLock(fn) {
  const deadline = Date.now() + 300_000;
  for (;;) {
    try {
      fs.mkdirSync(LOCK);
      break;
    } catch (err) {
      if (err.code !== 'EEXIST') throw err;
      // a lock older than the deadline is left by a killed build
      try {
        if (Date.now() - fs.statSync(LOCK).mtimeMs > 300_000) fs.rmSync(LOCK, { recursive: true, force: true });
      } catch {}
      if (Date.now() > deadline) throw new Error(`another build holds ${LOCK}; remove it if no build is running`);
      sleep(200);
    }
  }
  try {
    return fn();
  } finally {
    fs.rmSync(LOCK, { recursive: true, force: true });
  }
}

/**
 * Builds dist/ (always, or only when stale). Returns true when a build ran.
 * @throws when the TypeScript compiler is not installed or reports errors.
 */
export function build({ ifStale = false, quiet = false } = {}) {
  if (ifStale && !isStale()) return false;
  return withLock(() => {
    if (ifStale && !isStale()) return false; // another process built it while we waited
    const tsc = compilerPath();
    if (!tsc) {
      throw new Error(
        'dist/ is missing or out of date and the TypeScript compiler is not installed: run `npm ci` (it builds dist/) or `npm run build`',
      );
    }
    if (!quiet) process.stderr.write('switchboard: compiling the sources into dist/ …\n');
    const started = Date.now();
    const res = spawnSync(process.execPath, [tsc, '-p', path.join(ROOT, 'tsconfig.build.json')], {
      cwd: ROOT,
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    if (res.status !== 0)
      throw new Error(
        `tsc failed (exit ${res.status ?? res.signal}); fix the errors above (dist/ stays marked out of date)`,
      );
    for (const dir of SOURCE_DIRS) pruneOrphans(path.join(DIST, dir), path.join(ROOT, dir));
    const bundled = spawnSync(process.execPath, [path.join(ROOT, 'scripts', 'bundle.mjs')], {
      cwd: ROOT,
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    if (bundled.status !== 0)
      throw new Error(
        `bundling dist/ failed (exit ${bundled.status ?? bundled.signal}); see the errors above (dist/ stays marked out of date)`,
      );
    const client = spawnSync(process.execPath, [path.join(ROOT, 'scripts', 'build-web.mjs')], {
      cwd: ROOT,
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    if (client.status !== 0)
      throw new Error(
        `building the web client failed (exit ${client.status ?? client.signal}); see the errors above (dist/ stays marked out of date)`,
      );
    fs.writeFileSync(STAMP, `${new Date(started).toISOString()}\n`);
    // the stamp must count as older than any source edited while tsc ran
    const t = new Date(started);
    fs.utimesSync(STAMP, t, t);
    return true;
  });
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  try {
    // `prepare` passes --if-compiler: an install without devDependencies (`npm ci --omit=dev`)
    // has no compiler and must not fail for it; the bin says what to do if dist/ is then missing.
    if (process.argv.includes('--if-compiler') && !compilerPath()) process.exit(0);
    build({ ifStale: process.argv.includes('--if-stale'), quiet: false });
  } catch (err) {
    process.stderr.write(`${err.message}\n`);
    process.exit(1);
  }
}
