#!/usr/bin/env node
/**
 * Bundles the compiled JavaScript (dist/src, dist/plugins, dist/migrations, written by `tsc`)
 * into dist/bundle/ with esbuild, for start-up time: node loads a few files instead of about a
 * thousand modules (kysely alone is 263, zod 95). Run by scripts/build.mjs after `tsc`.
 *
 * Layout: dist/bundle/ mirrors dist/ (the entry at dist/bundle/src/cli.js, each migration at
 * dist/bundle/migrations/NAME.js, the worker scripts copied to where their callers look), with
 * code shared between them in dist/bundle/chunks/ and each lazily imported module (a platform
 * channel, a command) in a chunk of its own that loads when it is first imported.
 * `import.meta.url` in a bundled module reads as the URL that module has in this mirror, so every
 * path a module finds relative to itself (the migrations folder, worker scripts, package.json)
 * resolves as it does in dist/. The migrations are entries of the same bundle, so they share its
 * one copy of kysely (`instanceof` on kysely classes holds in them).
 *
 * Left outside (imported from node_modules at run time): native addons and the SDKs that load
 * only when their feature is configured (Slack, MCP, PostgreSQL) or only in a worker (mathjs).
 * Bundled CommonJS sees no `__dirname`: pino is bundled because switchboard writes through
 * `pino.destination` only (its transports find worker files by `__dirname`; using one would mean
 * adding pino to EXTERNAL).
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import * as esbuild from 'esbuild';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const DIST = path.join(ROOT, 'dist');
const OUT = path.join(DIST, 'bundle');
/** Loaded from node_modules, never bundled. */
export const EXTERNAL = ['better-sqlite3', 'pg', '@slack/bolt', '@modelcontextprotocol/sdk', 'mathjs', 'html-to-text'];
/** The marker every output file finds its bundle root by (the last one in its own URL). */
const ROOT_MARK = '/dist/bundle/';

/** Every file under `dir` (relative to DIST) whose name matches `re`. */
function filesUnder(dir, re) {
  const abs = path.join(DIST, dir);
  if (!fs.existsSync(abs)) return [];
  return fs
    .readdirSync(abs, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && re.test(e.name))
    .map((e) => path.relative(DIST, path.join(e.parentPath, e.name)));
}

/** Rewrites `import.meta.url` in a dist module to that module's URL in the bundle mirror. */
const moduleUrlPlugin = {
  name: 'module-url',
  setup(build) {
    build.onLoad({ filter: /[\\/]dist[\\/](src|plugins|migrations)[\\/].*\.m?js$/ }, async (args) => {
      const text = await fs.promises.readFile(args.path, 'utf8');
      if (/import\.meta\.(dirname|filename)/.test(text)) {
        return {
          errors: [
            { text: 'import.meta.dirname/filename would name the bundle, not this module: use import.meta.url' },
          ],
        };
      }
      if (!text.includes('import.meta.url')) return { contents: text, loader: 'js' };
      const rel = path.relative(DIST, args.path).split(path.sep).join('/');
      return { contents: text.replaceAll('import.meta.url', `(__bundleRoot + ${JSON.stringify(rel)})`), loader: 'js' };
    });
  },
};

/**
 * zod's `z.locales` (the error messages of every language, a third of zod's code) is never used:
 * the bundle keeps English, the one zod registers itself, and start-up parses ≈ 350 KB less.
 */
const zodEnglishOnlyPlugin = {
  name: 'zod-english-only',
  setup(build) {
    build.onLoad({ filter: /[\\/]zod[\\/]v4[\\/]locales[\\/]index\.js$/ }, (args) => ({
      contents: 'export { default as en } from "./en.js";\n',
      loader: 'js',
      resolveDir: path.dirname(args.path),
    }));
  },
};

/**
 * grammY's Node build imports node-fetch (with whatwg-url and tr46's Unicode tables: ≈ 15 ms of
 * CPU and 7 MB of memory at start) for its default fetch and for `InputFile`s made from a URL.
 * switchboard gives grammY its own fetch (`channels/telegram/bot-fetch.ts`) and uploads bytes, so
 * in the bundle the built-in fetch stands in for node-fetch, for whatever might still call it.
 */
const builtinFetchPlugin = {
  name: 'builtin-fetch-for-node-fetch',
  setup(build) {
    build.onResolve({ filter: /^node-fetch$/ }, () => ({ path: 'node-fetch', namespace: 'builtin-fetch' }));
    build.onLoad({ filter: /.*/, namespace: 'builtin-fetch' }, () => ({
      contents:
        'const fetch = (...args) => globalThis.fetch(...args);\nmodule.exports = fetch;\nmodule.exports.default = fetch;\n',
      loader: 'js',
    }));
  },
};

/** Build dist/bundle/ from dist/ (which `tsc` has just written). */
export async function bundle() {
  const entryPoints = ['src/cli.js', ...filesUnder('migrations', /\.js$/)].map((f) => path.join(DIST, f));
  const result = await esbuild.build({
    entryPoints,
    outdir: OUT,
    outbase: DIST,
    entryNames: '[dir]/[name]',
    chunkNames: 'chunks/[name]-[hash]',
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    external: EXTERNAL,
    // CommonJS packages inside an ES module bundle still call require() for node's built-ins
    banner: {
      js: [
        "import { createRequire as __createRequire } from 'node:module';",
        'const require = __createRequire(import.meta.url);',
        `const __bundleRoot = import.meta.url.slice(0, import.meta.url.lastIndexOf(${JSON.stringify(ROOT_MARK)}) + ${ROOT_MARK.length});`,
      ].join('\n'),
    },
    plugins: [moduleUrlPlugin, zodEnglishOnlyPlugin, builtinFetchPlugin],
    sourcemap: 'linked',
    logLevel: 'error',
    metafile: true,
  });
  const written = Object.keys(result.metafile.outputs).map((f) => path.relative(OUT, path.resolve(f)));
  // Worker and child-process scripts are started by path, not imported: copy them where their
  // callers (now in the bundle) look for them. They import packages only, found from here too.
  for (const rel of filesUnder('src', /\.mjs$/)) {
    fs.mkdirSync(path.dirname(path.join(OUT, rel)), { recursive: true });
    fs.copyFileSync(path.join(DIST, rel), path.join(OUT, rel));
    written.push(rel);
  }
  pruneOldOutputs(OUT, written);
  checkFileReferences();
}

/**
 * Removes the files of older builds, but keeps the previous build's chunks: a switchboard started from
 * it may still import one of its chunks lazily (the model client on the first message), and chunk
 * names change with their content. The lists live in `out`/outputs.json.
 * @param written the files (relative to `out`) this build wrote
 */
export function pruneOldOutputs(out, written) {
  const listFile = path.join(out, 'outputs.json');
  let previous = [];
  try {
    previous = JSON.parse(fs.readFileSync(listFile, 'utf8')).current ?? [];
  } catch {
    // no list yet: everything not written now is left over from before lists were kept
  }
  // only chunks: a migration or worker file of an older build must not outlive its source
  const keep = new Set([...written, ...previous.filter((rel) => rel.startsWith(`chunks${path.sep}`)), 'outputs.json']);
  for (const rel of fs.readdirSync(out, { recursive: true })) {
    const abs = path.join(out, rel);
    if (!keep.has(rel) && fs.statSync(abs).isFile()) fs.rmSync(abs);
  }
  fs.writeFileSync(listFile, `${JSON.stringify({ current: written, previous }, null, 1)}\n`);
}

/**
 * Fails the build when a bundled module names a file beside itself (`new URL('./x', import.meta.url)`)
 * that is not in the bundle: better here than when a user first calls the tool that needs it.
 */
function checkFileReferences() {
  const missing = [];
  for (const rel of fs.readdirSync(OUT, { recursive: true })) {
    if (!rel.endsWith('.js')) continue;
    const text = fs.readFileSync(path.join(OUT, rel), 'utf8');
    for (const m of text.matchAll(/new URL\("([^"]+)", __bundleRoot \+ "([^"]+)"\)/g)) {
      const target = path.join(OUT, path.dirname(m[2]), m[1]);
      if (!fs.existsSync(target)) missing.push(`${m[1]} (from ${m[2]})`);
    }
  }
  if (missing.length) throw new Error(`the bundle refers to files it does not contain: ${missing.join(', ')}`);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  try {
    await bundle();
  } catch (err) {
    process.stderr.write(`${err.message}\n`);
    process.exit(1);
  }
}
