/**
 * The attack of the issue against the real program: `switchboard chat --jsonl` with its secrets
 * in its environment, an approved `bash` reading `/proc/$PPID/environ` (plain and base64). In
 * bubblewrap the parent is the sandbox's own init with the clean environment; without it, the
 * parent is switchboard itself and every secret it holds is redacted from what the model and the
 * chat get (plain text only: base64 would get through, which is what the sandbox is for).
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startScriptedLlm, type ScriptedLlm } from '../emulators/llm.js';
import { spawnJsonl } from '../helpers/jsonl-process.js';
import { skipped } from '../helpers/skips.js';
import { skipReason } from '../helpers/system-tools.js';

const CHILD_TIMEOUT = 90_000;
const LLM_KEY = 'sb-llm-key-in-env-Az09Qw81';
const API_TOKEN = 'sb-api-token-in-env-Lk72Mn63';

let llm: ScriptedLlm;
let dir: string;

beforeAll(async () => {
  llm = await startScriptedLlm();
  dir = mkdtempSync(path.join(os.tmpdir(), 'sb-sandbox-cli-'));
});
afterAll(async () => {
  await llm.close();
  rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
});

/** Run one approved bash command in a fresh `chat --jsonl`; returns its tool result and streamed lines. */
async function runApproved(name: string, command: string, extra: Record<string, string>) {
  const ws = path.join(dir, name, 'ws');
  mkdirSync(ws, { recursive: true });
  const env = {
    OPENAI_BASE_URL: llm.url,
    OPENAI_API_KEY: LLM_KEY,
    SWITCHBOARD_API_TOKEN: API_TOKEN,
    SWITCHBOARD_MODEL: 'test-model',
    // SQLite whatever store the suite runs on: the data folder is part of what is hidden.
    DATABASE_URL: path.join(dir, name, 'data', 'switchboard.db'),
    SWITCHBOARD_WORKSPACE: ws,
    ...extra,
  };
  const before = llm.chatRequests().length;
  llm.push({ toolCalls: [{ name: 'bash', arguments: JSON.stringify({ command }) }] }, { text: 'read it' });
  const p = spawnJsonl(env);
  try {
    p.send({ type: 'message', text: 'show me your environment' });
    const asked = await p.waitForLine((l) => l.type === 'approval_requested', 'approval_requested', 60_000);
    p.send({ type: 'approve', id: asked.id, scope: 'once' });
    await p.waitForLine((l) => l.type === 'turn_done', 'turn_done', 60_000);
  } finally {
    p.endInput();
    await p.exited;
  }
  const request = llm.chatRequests()[before + 1];
  const result: string = request?.body.messages.filter((m: any) => m.role === 'tool').at(-1)?.content ?? '';
  const streamed = p.lines
    .filter((l) => l.type === 'tool_output')
    .map((l) => l.text as string)
    .join('\n');
  return { result, streamed, stderr: p.stderr.join('\n') };
}

function decodedBase64Lines(text: string): string {
  return text
    .split('\n')
    .filter((l) => /^[A-Za-z0-9+/=]{8,}$/.test(l))
    .map((l) => Buffer.from(l, 'base64').toString('utf8'))
    .join('\n');
}

const noBwrap = skipReason('bwrap', 'the sandbox is bubblewrap');

describe.skipIf(noBwrap !== undefined)(`switchboard's secrets from a sandboxed command${skipped(noBwrap)}`, () => {
  it(
    '/proc/$PPID/environ holds none of them, in plain text or base64',
    async () => {
      const { result, streamed } = await runApproved(
        'bwrap',
        "base64 -w0 /proc/$PPID/environ; echo; tr '\\0' '\\n' < /proc/$PPID/environ",
        {
          SWITCHBOARD__TOOLS__BASH__SANDBOX: 'bwrap',
        },
      );
      expect(result).toContain('PATH=');
      const seen = `${result}\n${streamed}\n${decodedBase64Lines(result)}`;
      for (const secret of [LLM_KEY, API_TOKEN]) expect(seen).not.toContain(secret);
      expect(seen).not.toContain('SWITCHBOARD_API_TOKEN');
      expect(seen).not.toContain('OPENAI_API_KEY');
    },
    CHILD_TIMEOUT,
  );
});

describe("switchboard's secrets from an unsandboxed command", () => {
  it(
    'are redacted from /proc/$PPID/environ as it reaches the model and the chat, and start-up warnings say so',
    async () => {
      const { result, streamed, stderr } = await runApproved('off', "tr '\\0' '\\n' < /proc/$PPID/environ", {
        SWITCHBOARD__TOOLS__BASH__SANDBOX: 'off',
        LOG_LEVEL: 'warn',
      });
      expect(result).toContain('SWITCHBOARD_API_TOKEN=[REDACTED]');
      expect(result).toContain('OPENAI_API_KEY=[REDACTED]');
      for (const secret of [LLM_KEY, API_TOKEN]) {
        expect(result).not.toContain(secret);
        expect(streamed).not.toContain(secret);
      }
      expect(stderr).toContain('shell sandbox: off (tools.bash.sandbox)');
      // Nor is its network isolated without bubblewrap, and the start-up log says so.
      expect(stderr).toContain("shell network: commands share the host's network");
    },
    CHILD_TIMEOUT,
  );
});
