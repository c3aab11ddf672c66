/**
 * No configured secret reaches the model or a chat through a tool's output, whatever the tool
 * (read_file and search here, through the real core); switchboard's database and configuration
 * file are refused to the file tools even when the workspace holds them.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { configSchema } from '../../src/config.js';
import { configSecrets } from '../../src/tools/redact.js';
import { startHarness, waitFor, type Harness } from '../helpers/harness.js';

const API_TOKEN = 'notify-api-token-Hj67Kl89';
const TG_TOKEN = '123456789:AAtelegram-bot-token-value-Zz001122';
const MCP_HEADER = 'mcp-header-token-Rt45Yu67';

let h: Harness;
afterEach(async () => {
  await h?.close();
});

const turnDone = (n: number) =>
  waitFor(() => h.events.filter((e) => e.event.type === 'turn_done').length >= n, `${n} turn_done`);
/** The tool results the model was sent in chat request `req`. */
const toolResults = (req: number): string[] =>
  h.llm
    .chatRequests()
    [req]?.body.messages.filter((m: any) => m.role === 'tool')
    .map((m: any) => m.content);
const call = (name: string, args: Record<string, unknown>) => ({
  toolCalls: [{ name, arguments: JSON.stringify(args) }],
});

describe('redaction of tool output', () => {
  it('hides configured secrets that a workspace file holds, in read_file and search output and their chat lines', async () => {
    h = await startHarness({ overrides: { http: { api_token: API_TOKEN }, telegram: { bot_token: TG_TOKEN } } });
    writeFileSync(
      path.join(h.config.workspace.root, 'notes.txt'),
      `first line\nthe api token is ${API_TOKEN} here\nbot: ${TG_TOKEN}\nlast line\n`,
    );
    h.llm.push(call('read_file', { path: 'notes.txt' }), { text: 'read' }, call('search', { query: 'token' }), {
      text: 'searched',
    });
    await h.send('read it');
    await turnDone(1);
    await h.send('search it');
    await turnDone(2);
    const [read] = toolResults(1);
    const searched = toolResults(3).at(-1) as string;
    for (const out of [read, searched]) {
      expect(out).toBeDefined();
      expect(out).not.toContain(API_TOKEN);
      expect(out).not.toContain(TG_TOKEN);
      expect(out).toContain('[REDACTED]');
    }
    expect(read).toContain('the api token is [REDACTED] here');
    expect(read).toContain('last line');
    expect(searched).toContain('notes.txt:2:the api token is [REDACTED] here');
    const shown = JSON.stringify([h.channel.printed, h.events]);
    expect(shown).not.toContain(API_TOKEN);
    expect(shown).not.toContain(TG_TOKEN);
  });

  it('refuses the database with a clear error even when the workspace is the data folder, and search never shows it', async () => {
    h = await startHarness();
    // A SQLite file whatever store the suite runs on: the database must sit in the workspace.
    const dataDir = h.dir;
    await h.close();
    h = await startHarness({
      dir: dataDir,
      overrides: { store: { database_url: path.join(dataDir, 'switchboard.db') }, workspace: { root: dataDir } },
    });
    h.llm.push(
      call('read_file', { path: 'switchboard.db' }),
      { text: 'no' },
      call('search', { query: 'marker-Gh12' }),
      { text: 'done' },
    );
    await h.send('remember marker-Gh12 please');
    await turnDone(1);
    await h.send('find it');
    await turnDone(2);
    expect(toolResults(1)).toEqual(["refused: switchboard.db: switchboard's database; no tool may read or change it"]);
    const searched = toolResults(3).at(-1) as string;
    expect(searched).toMatch(/^No matches/);
    expect(searched).not.toContain('switchboard.db');
  });
});

describe('configSecrets', () => {
  it('lists every credential of the configuration and of the environment, and nothing ordinary', () => {
    const config = configSchema.parse({
      llm: { api_key: 'llm-api-key-value-1' },
      store: { database_url: 'postgres://bot:db%2Fpass-word-9@127.0.0.1:5432/sb' },
      http: { api_token: API_TOKEN },
      slack: { bot_token: 'xoxb-slack-bot-token', signing_secret: 'slack-signing-secret-1' },
      mcp: {
        servers: {
          gh: {
            command: 'gh-mcp',
            env: { GITHUB_TOKEN: 'ghp-env-token-value', NODE_ENV: 'production', SESSION: 'a1b2c3d4e5f6g7h8i9' },
          },
          web: {
            url: 'https://user:url-password-1@mcp.example.org/',
            headers: { Authorization: `Bearer ${MCP_HEADER}` },
          },
        },
      },
    });
    const secrets = configSecrets(config, { SOME_SERVICE_TOKEN: 'environment-token-1', HOME: '/home/someone' });
    expect(secrets).toEqual(
      expect.arrayContaining([
        'llm-api-key-value-1',
        'db%2Fpass-word-9',
        'db/pass-word-9',
        API_TOKEN,
        'xoxb-slack-bot-token',
        'slack-signing-secret-1',
        'ghp-env-token-value',
        'a1b2c3d4e5f6g7h8i9',
        'url-password-1',
        `Bearer ${MCP_HEADER}`,
        MCP_HEADER,
        'environment-token-1',
      ]),
    );
    expect(secrets).not.toContain('production');
    expect(secrets).not.toContain('/home/someone');
  });
});
