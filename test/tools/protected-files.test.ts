/**
 * switchboard's configuration file and database are refused to every file tool, wherever the
 * workspace is: by name, by absolute path and through a symlink; listings and searches skip them.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { createSearchTool } from '../../src/tools/builtins/search.js';
import { listFilesTool } from '../../src/tools/builtins/list-files.js';
import { readFileTool } from '../../src/tools/builtins/read-file.js';
import { writeFileTool } from '../../src/tools/builtins/write-file.js';
import { makeContext, type TestContext } from './context.js';

let ctx: TestContext | undefined;
let dir: string | undefined;
afterEach(async () => {
  await ctx?.close();
  if (dir) fs.rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
  ctx = undefined;
});

/** A workspace that is also the folder of the config file and the database (the worst case). */
async function setUp(): Promise<{ configFile: string; db: string }> {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sb-protected-'));
  const db = path.join(dir, 'switchboard.db');
  fs.writeFileSync(db, 'SQLite format 3\0 row marker-Ab12');
  const configFile = path.join(dir, 'switchboard.toml');
  fs.writeFileSync(
    configFile,
    `[llm]\napi_key = "sk-config-file-key-marker-Ab12"\n[store]\ndatabase_url = "${db}"\n[workspace]\nroot = "${dir}"\n`,
  );
  fs.writeFileSync(path.join(dir, 'notes.txt'), 'marker-Ab12 in an ordinary file\n');
  fs.symlinkSync(configFile, path.join(dir, 'innocent.txt'));
  ctx = await makeContext({ loaded: loadConfig({ path: configFile, env: {} }) });
  return { configFile, db };
}

describe('protected files', () => {
  it('read_file refuses the config file and the database by name, absolute path and symlink', async () => {
    const { configFile, db } = await setUp();
    const c = ctx as TestContext;
    for (const [p, what] of [
      ['switchboard.toml', "switchboard's configuration file"],
      [configFile, "switchboard's configuration file"],
      ['innocent.txt', "switchboard's configuration file"],
      ['switchboard.db', "switchboard's database"],
      [db, "switchboard's database"],
    ] as const) {
      const r = await c.run(readFileTool, { path: p });
      expect(r.status, p).toBe('failed');
      expect(r.output, p).toBe(`refused: ${p}: ${what}; no tool may read or change it`);
    }
    const w = await c.run(writeFileTool, { path: 'switchboard.toml', content: '[llm]\n' });
    expect(w.status).toBe('failed');
    expect(fs.readFileSync(configFile, 'utf8')).toContain('sk-config-file-key');
    const ok = await c.run(readFileTool, { path: 'notes.txt' });
    expect(ok.output).toContain('ordinary file');
  });

  it('search and list_files skip them', async () => {
    await setUp();
    const c = ctx as TestContext;
    for (const backend of ['rg', 'js'] as const) {
      const r = await c.run(createSearchTool({ backend }), { query: 'marker-Ab12', output_mode: 'files' });
      expect(r.output.trim(), backend).toBe('1 match in 1 file\nnotes.txt');
    }
    const listed = await c.run(listFilesTool, {});
    expect(listed.output).toContain('notes.txt');
    // (A symlink is listed with its target, not read.)
    expect(listed.output).not.toMatch(/^switchboard\.(toml|db)/m);
  });
});
