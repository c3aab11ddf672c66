import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';

const tmp = () => mkdtempSync(path.join(os.tmpdir(), 'sb-config-'));

describe('config', () => {
  it('has working defaults with no file and no env', () => {
    const c = loadConfig({ env: {} });
    expect(c.llm.model).toBe('gpt-4o-mini');
    expect(c.tools.parallel).toBe(4);
    expect(c.http.port).toBe(8080);
    expect(c.workspace.deny_globs).toContain('secrets/**');
  });

  it('reads TOML and lets the environment win', () => {
    const dir = tmp();
    const file = path.join(dir, 'sb.toml');
    writeFileSync(file, '[llm]\nmodel = "from-file"\nmax_rounds = 7\n[access]\nadmins = ["telegram:1"]\n');
    const c = loadConfig({ path: file, env: { SWITCHBOARD_MODEL: 'from-env', SWITCHBOARD_ADMINS: 'telegram:1, slack:U2' } });
    expect(c.llm.model).toBe('from-env');
    expect(c.llm.max_rounds).toBe(7);
    expect(c.access.admins).toEqual(['telegram:1', 'slack:U2']);
  });

  it('strips a trailing slash from TELEGRAM_API_ROOT', () => {
    const c = loadConfig({ env: { TELEGRAM_API_ROOT: 'http://127.0.0.1:9000/' } });
    expect(c.telegram.api_root).toBe('http://127.0.0.1:9000');
  });

  it('names the bad key in one line', () => {
    expect(() => loadConfig({ env: { SWITCHBOARD_HTTP_PORT: 'eighty' } })).toThrow(/^config: http\.port \(env SWITCHBOARD_HTTP_PORT\): /);
    const dir = tmp();
    const file = path.join(dir, 'bad.toml');
    writeFileSync(file, '[tools]\nparallel = 0\n');
    expect(() => loadConfig({ path: file, env: {} })).toThrow(/config: tools\.parallel/);
    writeFileSync(file, '[llm\nmodel = 1');
    expect(() => loadConfig({ path: file, env: {} })).toThrow(ConfigError);
    expect(() => loadConfig({ path: path.join(dir, 'missing.toml'), env: {} })).toThrow(/cannot read/);
  });

  it('requires the Slack signing secret in HTTP mode', () => {
    expect(() => loadConfig({ env: { SLACK_BOT_TOKEN: 'xoxb-1' } })).toThrow(/slack\.signing_secret/);
  });
});
