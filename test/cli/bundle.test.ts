/**
 * The command users run is the bundle in dist/bundle/ (scripts/bundle.mjs). Code that is not
 * imported but started by path (worker threads) must still be found beside the bundled modules,
 * and the migrations must run from the bundle: a first start over a new database, then tools
 * whose code runs in worker files (math; search without ripgrep), through the real command.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startScriptedLlm, type ScriptedLlm } from '../emulators/llm.js';
import { spawnJsonl } from '../helpers/jsonl-process.js';

const ROOT = path.resolve(import.meta.dirname, '../..');

let llm: ScriptedLlm;
let dir: string;

beforeAll(async () => {
  llm = await startScriptedLlm();
  dir = mkdtempSync(path.join(os.tmpdir(), 'sb-bundle-'));
  mkdirSync(path.join(dir, 'ws'));
  writeFileSync(path.join(dir, 'ws', 'notes.txt'), 'the needle is here\n');
});
afterAll(async () => {
  await llm.close();
  rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
});

describe('the bundled command line', () => {
  it('is what bin/switchboard.js runs, and its worker-thread tools work from it', async () => {
    const { ENTRY } = (await import(path.join(ROOT, 'scripts/build.mjs'))) as { ENTRY: string };
    expect(path.relative(ROOT, ENTRY)).toBe(path.join('dist', 'bundle', 'src', 'cli.js'));
    expect(existsSync(ENTRY)).toBe(true);

    llm.push(
      {
        toolCalls: [
          { name: 'math', arguments: JSON.stringify({ expression: '6 * 7' }) },
          { name: 'search', arguments: JSON.stringify({ query: 'needle' }) },
        ],
      },
      { text: 'Both done.' },
    );
    const p = spawnJsonl({
      // only node on PATH: no ripgrep, so `search` runs its JavaScript worker
      PATH: path.dirname(process.execPath),
      OPENAI_BASE_URL: llm.url,
      OPENAI_API_KEY: 'k',
      SWITCHBOARD_MODEL: 'test-model',
      DATABASE_URL: `sqlite:${path.join(dir, 'new.db')}`,
      SWITCHBOARD_WORKSPACE: path.join(dir, 'ws'),
    });
    p.send({ type: 'message', text: 'compute and search' });
    await p.waitForLine((l) => l.type === 'turn_done', 'turn_done', 30_000);
    p.endInput();
    expect(await p.exited).toBe(0);
    // the two calls run at once: they may finish in either order
    expect(
      p.lines
        .filter((l) => l.type === 'tool_finished')
        .map((l) => [l.name, l.status])
        .sort(),
    ).toEqual([
      ['math', 'done'],
      ['search', 'done'],
    ]);
    const second = llm.chatRequests().at(-1)?.body as { messages: Array<{ role: string; content: string }> };
    const results = second.messages.filter((m) => m.role === 'tool').map((m) => String(m.content));
    expect(results[0]).toContain('42');
    expect(results[1]).toContain('notes.txt');
    expect(results[1]).toContain('needle');
  }, 60_000);

  it("a rebuild keeps the previous build's chunks (a running process may import one) but no other leftover", async () => {
    const { pruneOldOutputs } = (await import(path.join(ROOT, 'scripts/bundle.mjs'))) as {
      pruneOldOutputs: (out: string, written: string[]) => void;
    };
    const out = path.join(dir, 'out');
    const files = [
      'chunks/older.js',
      'chunks/previous.js',
      'chunks/current.js',
      'migrations/kept.js',
      'migrations/deleted.js',
      'src/cli.js',
    ];
    for (const f of files) {
      mkdirSync(path.dirname(path.join(out, f)), { recursive: true });
      writeFileSync(path.join(out, f), '');
    }
    writeFileSync(
      path.join(out, 'outputs.json'),
      JSON.stringify({ current: ['chunks/previous.js', 'migrations/kept.js', 'migrations/deleted.js', 'src/cli.js'] }),
    );
    pruneOldOutputs(out, ['chunks/current.js', 'migrations/kept.js', 'src/cli.js']);
    expect(files.filter((f) => existsSync(path.join(out, f)))).toEqual([
      'chunks/previous.js',
      'chunks/current.js',
      'migrations/kept.js',
      'src/cli.js',
    ]);
    // the next build drops what this one only kept
    pruneOldOutputs(out, ['chunks/current.js', 'migrations/kept.js', 'src/cli.js']);
    expect(existsSync(path.join(out, 'chunks/previous.js'))).toBe(false);
    expect(existsSync(path.join(out, 'chunks/current.js'))).toBe(true);
  });
});
