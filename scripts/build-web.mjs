#!/usr/bin/env node
/**
 * Builds the web chat's client (web/client/, Preact) into dist/web/app.js and app.css with
 * esbuild: one minified ES module and one stylesheet, nothing fetched from elsewhere at run time
 * (the page's CSP allows only its own origin). Run by scripts/build.mjs after the server build.
 */
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import * as esbuild from 'esbuild';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** Build dist/web/. */
export async function buildWeb() {
  await esbuild.build({
    entryPoints: { app: path.join(ROOT, 'web/client/app.tsx'), 'app-style': path.join(ROOT, 'web/client/style.css') },
    outdir: path.join(ROOT, 'dist/web'),
    entryNames: '[name]',
    bundle: true,
    minify: true,
    format: 'esm',
    platform: 'browser',
    target: ['es2022'],
    jsx: 'automatic',
    jsxImportSource: 'preact',
    legalComments: 'none',
    logLevel: 'warning',
  });
  // esbuild names a CSS entry after its key: keep the served name short.
  const fs = await import('node:fs');
  fs.renameSync(path.join(ROOT, 'dist/web/app-style.css'), path.join(ROOT, 'dist/web/app.css'));
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  buildWeb().catch((err) => {
    process.stderr.write(`${err.message}\n`);
    process.exit(1);
  });
}
