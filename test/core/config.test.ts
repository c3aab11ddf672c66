import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { envNameOf, genericEnv, leafKeys } from '../../src/config-keys.js';
import { ConfigError, configSchema, loadConfig } from '../../src/config.js';

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
    const c = loadConfig({
      path: file,
      env: { SWITCHBOARD_MODEL: 'from-env', SWITCHBOARD_ADMINS: 'telegram:1, slack:U2' },
    });
    expect(c.llm.model).toBe('from-env');
    expect(c.llm.max_rounds).toBe(7);
    expect(c.access.admins).toEqual(['telegram:1', 'slack:U2']);
  });

  it('strips a trailing slash from TELEGRAM_API_ROOT', () => {
    const c = loadConfig({ env: { TELEGRAM_API_ROOT: 'http://127.0.0.1:9000/' } });
    expect(c.telegram.api_root).toBe('http://127.0.0.1:9000');
  });

  it('names the bad key in one line', () => {
    expect(() => loadConfig({ env: { SWITCHBOARD_HTTP_PORT: 'eighty' } })).toThrow(
      /^config: http\.port \(env SWITCHBOARD_HTTP_PORT\): /,
    );
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

  it('requires the Telegram webhook secret with a webhook URL (a check the [telegram] section declares)', () => {
    expect(() => loadConfig({ env: { TELEGRAM_WEBHOOK_URL: 'https://bot.example/hook' } })).toThrow(
      new ConfigError(
        'config: telegram.webhook_secret (or env TELEGRAM_WEBHOOK_SECRET): required when telegram.webhook_url is set',
      ),
    );
    const c = loadConfig({
      env: { TELEGRAM_WEBHOOK_URL: 'https://bot.example/hook', SWITCHBOARD__TELEGRAM__WEBHOOK_SECRET: 's' },
    });
    expect(c.telegram).toMatchObject({ webhook_url: 'https://bot.example/hook', webhook_secret: 's' });
  });

  it('strips a trailing slash from an API root set in the file too', () => {
    const file = path.join(tmp(), 'sb.toml');
    writeFileSync(file, '[telegram]\napi_root = "http://127.0.0.1:9000//"\n');
    expect(loadConfig({ path: file, env: {} }).telegram.api_root).toBe('http://127.0.0.1:9000');
  });
});

describe('config: strictness (no silent typos, no coercion)', () => {
  const load = (toml: string, env: NodeJS.ProcessEnv = {}) => {
    const file = path.join(tmp(), 'sb.toml');
    writeFileSync(file, toml);
    return { file, run: () => loadConfig({ path: file, env }) };
  };

  it('rejects an unknown key and a misspelt section, naming the closest valid one', () => {
    const a = load('[http]\nprot = 9090\n');
    expect(a.run).toThrow(new ConfigError(`config: unknown key http.prot in ${a.file} — did you mean http.port?`));
    const b = load('[telegarm]\nbot_token = "x"\n');
    expect(b.run).toThrow(
      new ConfigError(`config: unknown section [telegarm] in ${b.file} — did you mean [telegram]?`),
    );
    const c = load('[tools.web_search]\nbackend = "none"\napi_kye = "k"\n');
    expect(c.run).toThrow(`unknown key tools.web_search.api_kye in ${c.file} — did you mean tools.web_search.api_key?`);
    const d = load('[[approvals.rules]]\ntool = "bash"\naction = "allow"\npriorty = 3\n');
    expect(d.run).toThrow(
      `unknown key approvals.rules[0].priorty in ${d.file} — did you mean approvals.rules[0].priority?`,
    );
  });

  it('does not coerce booleans or empty strings into numbers, and blames the file, not an env var', () => {
    for (const [toml, key] of [
      ['[http]\nport = true\n', 'http.port'],
      ['[http]\nport = ""\n', 'http.port'],
      ['[approvals]\ntimeout_seconds = false\n', 'approvals.timeout_seconds'],
      ['[llm]\ntemperature = true\n', 'llm.temperature'],
    ] as const) {
      const f = load(toml);
      expect(f.run).toThrow(
        new RegExp(
          `^config: ${key.replace('.', '\\.')} \\(in ${f.file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\): Invalid input: expected number`,
        ),
      );
    }
    expect(() => loadConfig({ env: { SWITCHBOARD_HTTP_PORT: 'eighty' } })).toThrow(
      'config: http.port (env SWITCHBOARD_HTTP_PORT): Invalid input: expected number, received string',
    );
    expect(loadConfig({ env: { SWITCHBOARD_HTTP_PORT: '9090' } }).http.port).toBe(9090);
  });

  it('names the line and column of malformed TOML', () => {
    const f = load('[llm]\nmodel = "x"\nmax_rounds = = 3\n');
    expect(f.run).toThrow(new ConfigError(`config: ${f.file}:3:14: not valid TOML: invalid value`));
  });

  it('refuses a base_url without a scheme', () => {
    const f = load('[llm]\nbase_url = "localhost:11434/v1"\n');
    expect(f.run).toThrow(
      `config: llm.base_url (in ${f.file}): expected an http(s) URL such as http://127.0.0.1:11434/v1`,
    );
  });
});

describe('config: SWITCHBOARD__<SECTION>__<KEY> for every key', () => {
  it('sets any key, nested ones too; lists as comma-separated or JSON; lists of tables as JSON', () => {
    const c = loadConfig({
      env: {
        SWITCHBOARD__LLM__SYSTEM_PROMPT: 'Be brief.',
        SWITCHBOARD__LLM__TEMPERATURE: '0.2',
        SWITCHBOARD__LLM__MAX_ROUNDS: '9',
        SWITCHBOARD__TOOLS__WEB_SEARCH__BACKEND: 'searxng',
        SWITCHBOARD__TOOLS__WEB_SEARCH__URL: 'http://127.0.0.1:8888',
        SWITCHBOARD__TOOLS__WEB_SEARCH__API_KEY: 'k',
        SWITCHBOARD__APPROVALS__TIMEOUT_SECONDS: '300',
        SWITCHBOARD__APPROVALS__RULES: '[{"tool":"bash","action":"deny"}]',
        SWITCHBOARD__ACCESS__ALLOWED_USERS: 'telegram:1, slack:U2',
        SWITCHBOARD__WORKSPACE__DENY_GLOBS: '["a/**","b/**"]',
        SWITCHBOARD__AUDIO__TRANSCRIPTION_ENABLED: 'true',
        SWITCHBOARD__HTTP__HOST: '127.0.0.1',
        SWITCHBOARD__SLACK__TEAM_ID: 'T1',
      },
    });
    expect(c.llm).toMatchObject({ system_prompt: 'Be brief.', temperature: 0.2, max_rounds: 9 });
    expect(c.tools.web_search).toEqual({ backend: 'searxng', url: 'http://127.0.0.1:8888', api_key: 'k' });
    expect(c.approvals).toEqual({ timeout_seconds: 300, rules: [{ tool: 'bash', action: 'deny', priority: 0 }] });
    expect(c.access.allowed_users).toEqual(['telegram:1', 'slack:U2']);
    expect(c.workspace.deny_globs).toEqual(['a/**', 'b/**']);
    expect(c.audio.transcription_enabled).toBe(true);
    expect(c.http.host).toBe('127.0.0.1');
    expect(c.slack.team_id).toBe('T1');
  });

  it('every key of the schema has an environment name that reaches it', () => {
    for (const key of leafKeys(configSchema)) {
      const name = envNameOf(key);
      expect(name).toMatch(/^SWITCHBOARD__[A-Z_]+(__[A-Z_]+)+$/);
      const r = genericEnv(configSchema, { [name]: 'x' });
      expect(r.values[0]?.key).toBe(key);
    }
  });

  it('rejects a misspelt variable with the closest name, and blames the env var for its bad value', () => {
    expect(() => loadConfig({ env: { SWITCHBOARD__HTTP__PROT: '1' } })).toThrow(
      new ConfigError(
        'config: unknown environment variable SWITCHBOARD__HTTP__PROT — did you mean SWITCHBOARD__HTTP__PORT?',
      ),
    );
    expect(() => loadConfig({ env: { SWITCHBOARD__APPROVALS__TIMEOUT_SECONDS: 'soon' } })).toThrow(
      'config: approvals.timeout_seconds (env SWITCHBOARD__APPROVALS__TIMEOUT_SECONDS): Invalid input: expected number, received string',
    );
    expect(() => loadConfig({ env: { SWITCHBOARD__APPROVALS__RULES: '[{"tool":"bash"}]' } })).toThrow(
      /^config: approvals\.rules\.0\.action \(env SWITCHBOARD__APPROVALS__RULES\): /,
    );
  });
});
