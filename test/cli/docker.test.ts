/**
 * The Docker image, read from the Dockerfile and .dockerignore (Docker itself does not run in the
 * test environment), and its one build output run from a folder laid out as the image is.
 */
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ScriptedLlm, startScriptedLlm } from '../emulators/llm.js';
import { spawnJsonl } from '../helpers/jsonl-process.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const dockerfile = readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8');
const finalStage = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));
const buildStage = dockerfile.slice(0, dockerfile.lastIndexOf('\nFROM '));

describe('Dockerfile', () => {
  it('pins the base image by digest, one ARG for both stages, and says how to update it', () => {
    const arg = /^ARG NODE_IMAGE=(\S+)$/m.exec(dockerfile)?.[1];
    expect(arg).toMatch(/^node:22-slim@sha256:[0-9a-f]{64}$/);
    const image = ['$', '{NODE_IMAGE}'].join('');
    expect(dockerfile.match(/^FROM .*/gm)).toEqual([`FROM ${image} AS build`, `FROM ${image}`]);
    expect(dockerfile).toContain('docker buildx imagetools inspect node:22-slim');
    expect(readFileSync(path.join(ROOT, 'docs/docker.md'), 'utf8')).toContain(
      'docker buildx imagetools inspect node:22-slim',
    );
  });

  it('ships one build output (the bundle and the web client), installs bubblewrap and slirp4netns, and checks health through the config', () => {
    expect(buildStage).toMatch(/^COPY web \.\/web$/m);
    const copies = finalStage.match(/^COPY --from=build \S+/gm);
    expect(copies).toEqual([
      'COPY --from=build /app/node_modules',
      'COPY --from=build /app/dist/bundle',
      'COPY --from=build /app/dist/web',
    ]);
    expect(finalStage).toMatch(/apt-get install[^\n]*\sbubblewrap\s/);
    // The sandbox's default network (tools.bash.network = "egress") and the tool that sets its rules.
    expect(finalStage).toMatch(/apt-get install[^\n]*\sslirp4netns\s/);
    expect(finalStage).toMatch(/apt-get install[^\n]*\siproute2\s/);
    expect(finalStage).toMatch(
      /HEALTHCHECK[^\n]*\\\n\s*CMD \["node", "\/app\/dist\/bundle\/src\/cli\.js", "healthcheck"\]/,
    );
    expect(finalStage).toMatch(/^USER node$/m);
    // http.host defaults to loopback; the container's published port needs every interface.
    expect(finalStage).toMatch(/^\s*SWITCHBOARD__HTTP__HOST=0\.0\.0\.0$/m);
  });

  it('.dockerignore keeps secrets, local config and data out of the build context', () => {
    const ignored = readFileSync(path.join(ROOT, '.dockerignore'), 'utf8').split('\n');
    for (const entry of ['.env', 'switchboard.toml', 'data/', 'node_modules', 'dist']) expect(ignored).toContain(entry);
  });
});

describe('the image layout', () => {
  let llm: ScriptedLlm;
  let app: string;
  beforeAll(async () => {
    llm = await startScriptedLlm();
    // /app as the final stage builds it: dist/bundle, dist/web, bin, package.json, node_modules.
    app = mkdtempSync(path.join(os.tmpdir(), 'sb-image-'));
    for (const rel of ['dist/bundle', 'dist/web', 'bin', 'config', 'package.json', 'scripts/build.mjs']) {
      cpSync(path.join(ROOT, rel), path.join(app, rel), { recursive: true });
    }
    symlinkSync(path.join(ROOT, 'node_modules'), path.join(app, 'node_modules'));
    mkdirSync(path.join(app, 'data'));
    mkdirSync(path.join(app, 'ws'));
    writeFileSync(path.join(app, 'ws', 'x.txt'), 'x\n');
  });
  afterAll(async () => {
    await llm.close();
    rmSync(app, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
  });

  it('runs from dist/bundle alone: migrates a new database and answers', async () => {
    llm.push({ text: 'answered from the bundle' });
    const env = {
      OPENAI_BASE_URL: llm.url,
      OPENAI_API_KEY: 'k',
      SWITCHBOARD_MODEL: 'test-model',
      DATABASE_URL: `sqlite:${path.join(app, 'data', 'switchboard.db')}`,
      SWITCHBOARD_WORKSPACE: path.join(app, 'ws'),
    };
    const p = spawnJsonl(env, [], { bin: path.join(app, 'bin', 'switchboard.js') });
    p.send({ type: 'message', text: 'hi' });
    await p.waitForLine((l) => l.type === 'turn_done', 'turn_done');
    p.endInput();
    expect(await p.exited).toBe(0);
    expect(p.lines.find((l) => l.type === 'reply')?.text).toBe('answered from the bundle');
  }, 60_000);
});
