/* biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${VAR} expansion is what these tests check */
/** MCP configuration: TOML `[mcp.servers.NAME]`, the `mcpServers` JSON file, `${VAR}`, bad config. */
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { mcpToolName } from '../../src/mcp/naming.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'sb-mcp-config-'));
function file(name: string, text: string): string {
  const p = path.join(dir, name);
  writeFileSync(p, text);
  return p;
}
const fails = (fn: () => unknown): string => {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as Error).message;
  }
  throw new Error('expected a ConfigError');
};

describe('MCP config', () => {
  it('reads stdio and HTTP servers from TOML, with defaults and ${VAR} in env and headers', () => {
    const toml = file(
      'ok.toml',
      '[mcp.servers.files]\ncommand = "node"\nargs = ["s.js"]\nenv = { TOKEN = "t-${SECRET}" }\nlazy = true\n' +
        '[mcp.servers.search]\nurl = "http://127.0.0.1:3001/mcp"\nheaders = { Authorization = "Bearer ${SECRET}" }\n',
    );
    const c = loadConfig({ path: toml, env: { SECRET: 's3' } });
    expect(c.mcp.servers.files).toMatchObject({
      command: 'node',
      args: ['s.js'],
      env: { TOKEN: 't-s3' },
      lazy: true,
      timeout_seconds: 120,
    });
    expect(c.mcp.servers.search).toMatchObject({
      url: 'http://127.0.0.1:3001/mcp',
      headers: { Authorization: 'Bearer s3' },
      lazy: false,
    });
  });

  it('merges the mcpServers JSON file given by flag or SWITCHBOARD_MCP_CONFIG', () => {
    const json = file(
      'servers.json',
      JSON.stringify({
        mcpServers: { web: { url: 'http://127.0.0.1:1/mcp' }, git: { command: 'git-mcp', disabled: true } },
      }),
    );
    const byFlag = loadConfig({ env: {}, mcpConfigPath: json });
    expect(Object.keys(byFlag.mcp.servers)).toEqual(['web', 'git']);
    expect(byFlag.mcp.servers.git?.enabled).toBe(false);
    expect(loadConfig({ env: { SWITCHBOARD_MCP_CONFIG: json } }).mcp.servers.web?.url).toBe('http://127.0.0.1:1/mcp');
  });

  it('names the key of a bad server', () => {
    const both = file('both.toml', '[mcp.servers.x]\ncommand = "a"\nurl = "http://h/"\n');
    expect(fails(() => loadConfig({ path: both, env: {} }))).toBe(
      `config: mcp.servers.x (in ${both}): set either command (stdio) or url (HTTP), not both`,
    );
    const none = file('none.toml', '[mcp.servers.x]\nargs = []\n');
    expect(fails(() => loadConfig({ path: none, env: {} }))).toBe(
      `config: mcp.servers.x (in ${none}): set command (stdio) or url (HTTP)`,
    );
    expect(
      fails(() => loadConfig({ path: file('name.toml', '[mcp.servers."my server"]\ncommand = "a"\n'), env: {} })),
    ).toMatch(/^config: mcp\.servers\.my server \(in .*name\.toml\): server names may only use letters/);
    expect(fails(() => loadConfig({ path: file('sep.toml', '[mcp.servers.a__b]\ncommand = "a"\n'), env: {} }))).toMatch(
      /^config: mcp\.servers\.a__b \(in .*\): .*"__"/,
    );
    expect(fails(() => loadConfig({ path: file('typo.toml', '[mcp.servers.x]\ncomand = "a"\n'), env: {} }))).toMatch(
      /^config: unknown key mcp\.servers\.x\.comand in .*typo\.toml — did you mean mcp\.servers\.x\.command\?$/,
    );
    expect(
      fails(() =>
        loadConfig({
          path: file('var.toml', '[mcp.servers.x]\nurl = "http://h/"\nheaders = { A = "${NOPE}" }\n'),
          env: {},
        }),
      ),
    ).toBe('config: mcp.servers.x.headers.A: ${NOPE} is not set in the environment');
    const json = file('bad.json', JSON.stringify({ mcpServers: { y: { command: 'a', url: 'http://h/' } } }));
    expect(fails(() => loadConfig({ env: {}, mcpConfigPath: json }))).toBe(
      `config: ${json}: mcpServers.y: set either command (stdio) or url (HTTP), not both`,
    );
    expect(fails(() => loadConfig({ env: {}, mcpConfigPath: file('notjson.json', '{') }))).toMatch(
      /^config: .*notjson\.json: cannot read MCP config/,
    );
    const dup = file('dup.json', JSON.stringify({ mcpServers: { x: { command: 'a' } } }));
    expect(
      fails(() =>
        loadConfig({ path: file('dup.toml', '[mcp.servers.x]\ncommand = "b"\n'), env: {}, mcpConfigPath: dup }),
      ),
    ).toMatch(/mcpServers\.x: also defined as \[mcp\.servers\.x\]/);
  });
});

describe('MCP tool names', () => {
  it('prefixes, replaces characters outside [A-Za-z0-9_-] and keeps long names distinct within 64', () => {
    expect(mcpToolName('files', 'read')).toBe('mcp__files__read');
    expect(mcpToolName('files', 'read.file v2')).toBe('mcp__files__read_file_v2');
    const a = mcpToolName('files', `${'x'.repeat(80)}a`);
    const b = mcpToolName('files', `${'x'.repeat(80)}b`);
    expect(a).toHaveLength(64);
    expect(b).toHaveLength(64);
    expect(a).not.toBe(b);
  });
});
