/**
 * switchboard as an MCP host against the official reference servers (server-everything,
 * server-filesystem) over stdio and Streamable HTTP: client capabilities, roots, server
 * instructions in the system prompt, content annotations, resources, task-only tools and a
 * Streamable HTTP server restarted on the same port mid-conversation.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import type { McpToolSource } from '../../src/mcp/source.js';
import { type Harness, startHarness, waitFor } from '../helpers/harness.js';
import { sharedSetup } from './shared-setup.js';
import { type EverythingHttp, everythingStdio, filesystemStdio, startEverythingHttp } from './reference-servers.js';

const ALLOW = { rules: [{ tool: 'mcp__*', action: 'allow' }] };

let h: Harness | undefined;
let http: EverythingHttp | undefined;
/** False while `h` is the describe's shared harness, which its afterAll closes. */
let ownHarness = true;
// A test on the shared harness has a chat of its own; these are where its requests, events and
// files begin, so that what earlier tests left there is not read as this test's.
let chatKey = 'chat1';
let firstRequest = 0;
let firstEvent = 0;
let firstFile = 0;
afterEach(async () => {
  if (ownHarness) {
    await h?.close();
    await http?.kill();
  }
  h = http = undefined;
  ownHarness = true;
  chatKey = 'chat1';
  firstRequest = firstEvent = firstFile = 0;
});

/** This test's requests to the model, in order. */
const requests = () => (h as Harness).llm.chatRequests().slice(firstRequest);
/** This test's events. */
const events = () => h?.events.slice(firstEvent) ?? [];
const toolMessages = (round: number): string[] =>
  requests()
    [round]?.body.messages.filter((m: any) => m.role === 'tool')
    .map((m: any) => m.content) ?? [];
const systemOf = (round: number): string => requests()[round]?.body.messages[0]?.content ?? '';
const turnsDone = (n: number) =>
  waitFor(() => events().filter((e) => e.event.type === 'turn_done').length >= n, `${n} turn(s) done`, 30_000);
/** Send `text` in this test's chat. */
const send = (text: string) => (h as Harness).send(text, { chatKey });
const source = (name: string) =>
  (h ? (h.core.registry as unknown as { sources: McpToolSource[] }).sources : []).find((s) => s.name === `mcp:${name}`);
const hasTool = (name: string) => waitFor(() => h?.core.registry.get(name), `tool ${name}`, 15_000);

describe.each(['stdio', 'http'] as const)('server-everything over %s', (mode) => {
  async function open(extra: Record<string, unknown> = {}) {
    let entry: Record<string, unknown>;
    let server: EverythingHttp | undefined;
    if (mode === 'http') {
      server = await startEverythingHttp();
      entry = { url: server.url, ...extra };
    } else entry = everythingStdio(extra);
    h = await startHarness({ overrides: { mcp: { servers: { ev: entry } }, approvals: ALLOW } });
    http = server;
    // The tools that need client capabilities are registered after initialisation (list_changed).
    await hasTool('mcp__ev__get-roots-list');
    return { harness: h, server };
  }

  /** A harness and server of the test's own: for a server's state that is the test's alone. */
  async function start(extra: Record<string, unknown> = {}) {
    await open(extra);
  }

  // Capped instructions (the instructions test's setting) change nothing the other tests read.
  const shared = sharedSetup(() => open({ max_instructions_chars: 300 }));
  /** The shared harness, with a new chat for this test. */
  async function startShared() {
    h = (await shared.take()).harness;
    ownHarness = false;
    chatKey = `chat-${h.llm.chatRequests().length}-${h.events.length}`;
    firstRequest = h.llm.chatRequests().length;
    firstEvent = h.events.length;
    firstFile = h.channel.files.length;
  }

  it('is told of sampling, elicitation (form and URL) and roots, and gets the workspace as a file:// root', async () => {
    await startShared();
    for (const t of [
      'trigger-elicitation-request',
      'trigger-url-elicitation',
      'trigger-sampling-request',
      'simulate-research-query',
    ]) {
      expect(h?.core.registry.get(`mcp__ev__${t}`), t).toBeDefined();
    }
    h?.llm.push({ toolCalls: [{ name: 'mcp__ev__get-roots-list', arguments: '{}' }] }, { text: 'done' });
    await send('roots?');
    await turnsDone(1);
    const workspace = pathToFileURL(path.join(h?.dir as string, 'workspace')).href;
    expect(toolMessages(1)[0]).toContain(`URI: ${workspace}`);
  });

  it('puts the server instructions, labelled and capped, into the system prompt, the same bytes each round', async () => {
    await startShared();
    h?.llm.push({ toolCalls: [{ name: 'mcp__ev__echo', arguments: '{"message":"x"}' }] }, { text: 'done' });
    await send('hello');
    await turnsDone(1);
    const system = systemOf(0);
    expect(system).toContain('Instructions of the MCP server "ev" (its tools are mcp__ev__*):\n# Everything Server');
    expect(system).toMatch(/\[instructions cut at 300 of \d{4} characters\]/);
    expect(systemOf(1)).toBe(system);
  });

  it('keeps user-only content from the model and assistant-only content from the chat', async () => {
    await startShared();
    h?.llm.push(
      {
        toolCalls: [
          { name: 'mcp__ev__get-annotated-message', arguments: '{"messageType":"success","includeImage":true}' },
        ],
      },
      { toolCalls: [{ name: 'mcp__ev__get-annotated-message', arguments: '{"messageType":"debug"}' }] },
      { text: 'done' },
    );
    await send('annotations');
    await turnsDone(1);
    // success: text and image are for the user: shown, and the model hears only that they were.
    expect(toolMessages(1)[0]).toBe('(the result was shown to the user)');
    const shown = events()
      .filter((e) => e.event.type === 'tool_output')
      .map((e) => (e.event as { text: string }).text);
    expect(shown).toContain('Operation completed successfully\n');
    expect(h?.channel.files.slice(firstFile)).toHaveLength(1);
    // debug: for the assistant only; the chat's summary line does not repeat it.
    expect(toolMessages(2)[1]).toBe('Debug: Cache hit ratio 0.95, latency 150ms');
    expect(shown.some((t) => t.includes('Cache hit'))).toBe(false);
  });

  it('lists resources and templates and reads a text resource and a template-made blob', async () => {
    await startShared();
    h?.llm.push(
      { toolCalls: [{ name: 'mcp__ev__list_resources', arguments: '{}' }] },
      { toolCalls: [{ name: 'mcp__ev__read_resource', arguments: '{"uri":"demo://resource/dynamic/text/7"}' }] },
      { toolCalls: [{ name: 'mcp__ev__read_resource', arguments: '{"uri":"demo://resource/dynamic/blob/3"}' }] },
      { toolCalls: [{ name: 'mcp__ev__read_resource', arguments: '{"uri":"demo://nothing/here"}' }] },
      { text: 'done' },
    );
    await send('resources');
    await turnsDone(1);
    const list = toolMessages(1)[0] ?? '';
    expect(list).toMatch(/^Resources \(\d+\):\n- demo:\/\/resource\/static\/document\//);
    expect(list).toContain('- demo://resource/dynamic/text/{resourceId}');
    expect(toolMessages(2)[1]).toMatch(/^\[resource demo:\/\/resource\/dynamic\/text\/7\]\n.*7/);
    expect(toolMessages(3)[2]).toMatch(
      /^\[resource demo:\/\/resource\/dynamic\/blob\/3\] \[.* saved to mcp-output\/ev\//,
    );
    expect(toolMessages(4)[3]).toMatch(/^Error: MCP server "ev", resources: .*demo:\/\/nothing\/here/);
  });

  it('runs a task-only tool as a task, with its status as progress', async () => {
    await startShared();
    expect(h?.core.registry.get('mcp__ev__simulate-research-query')).toBeDefined();
    h?.llm.push(
      { toolCalls: [{ name: 'mcp__ev__simulate-research-query', arguments: '{"topic":"otters"}' }] },
      { text: 'done' },
    );
    await send('research');
    await turnsDone(1);
    const result = toolMessages(1)[0] ?? '';
    expect(result).not.toMatch(/requires task-based execution/);
    expect(result).toContain('otters');
    const progress = events()
      .filter((e) => e.event.type === 'tool_output')
      .map((e) => (e.event as { text: string }).text);
    expect(progress.some((p) => p.includes('Gathering sources'))).toBe(true);
  });

  it('cancels the task of a task-only tool on stop', async () => {
    await start();
    h?.llm.push({ toolCalls: [{ name: 'mcp__ev__simulate-research-query', arguments: '{"topic":"otters"}' }] });
    await h?.send('research');
    await waitFor(() => h?.events.some((e) => e.event.type === 'tool_output'), 'first task status', 15_000);
    await h?.core.stop({ channel: 'test', chatKey: 'chat1' }, 'test:u1');
    const conn = source('ev')?.connection;
    const tasks = await waitFor(
      async () => {
        const list = await conn?.use((c) => c.experimental.tasks.listTasks());
        return list?.tasks.every((t) => t.status === 'cancelled') && list.tasks.length > 0 ? list.tasks : null;
      },
      'the task cancelled on the server',
      10_000,
    );
    expect(tasks).toHaveLength(1);
    const call = await h?.core.db.selectFrom('tool_calls').select('status').executeTakeFirst();
    expect(call?.status).toBe('cancelled');
  });
});

describe('server-filesystem', () => {
  it('started with no directory, works in the workspace offered as its root', async () => {
    h = await startHarness({ overrides: { mcp: { servers: { fs: filesystemStdio() } }, approvals: ALLOW } });
    await hasTool('mcp__fs__list_allowed_directories');
    const ws = path.join(h.dir, 'workspace');
    writeFileSync(path.join(ws, 'note.txt'), 'from the workspace');
    h.llm.push(
      { toolCalls: [{ name: 'mcp__fs__list_allowed_directories', arguments: '{}' }] },
      {
        toolCalls: [
          { name: 'mcp__fs__read_text_file', arguments: JSON.stringify({ path: path.join(ws, 'note.txt') }) },
        ],
      },
      {
        toolCalls: [
          {
            name: 'mcp__fs__write_file',
            arguments: JSON.stringify({ path: path.join(ws, 'out.txt'), content: 'written' }),
          },
        ],
      },
      { text: 'done' },
    );
    await h.send('files');
    await turnsDone(1);
    expect(toolMessages(1)[0]).toContain(ws);
    expect(toolMessages(2)[1]).toBe('from the workspace');
    expect(existsSync(path.join(ws, 'out.txt')) && readFileSync(path.join(ws, 'out.txt'), 'utf8')).toBe('written');
  });

  it('gets the configured roots instead of the workspace, and hears when they change', async () => {
    const ws = (dir: string) => path.join(dir, 'workspace');
    h = await startHarness({
      overrides: { mcp: { servers: { fs: filesystemStdio([], { roots: ['/tmp'] }) } }, approvals: ALLOW },
    });
    await hasTool('mcp__fs__list_allowed_directories');
    h.llm.push({ toolCalls: [{ name: 'mcp__fs__list_allowed_directories', arguments: '{}' }] }, { text: 'one' });
    await h.send('dirs');
    await turnsDone(1);
    const first = toolMessages(1)[0] ?? '';
    expect(first).toContain('/tmp');
    expect(first).not.toContain(ws(h.dir));
    await source('fs')?.connection.setRoots([{ uri: pathToFileURL(ws(h.dir)).href, name: 'workspace' }]);
    await waitFor(
      async () => {
        const r = await source('fs')?.connection.call(
          'list_allowed_directories',
          {},
          { signal: new AbortController().signal },
        );
        return JSON.stringify(r).includes(ws(h?.dir as string));
      },
      'the server to take the new roots',
      10_000,
    );
  });
});

describe('Streamable HTTP session recovery', () => {
  it('opens a new session once when the server restarted on the same port, and the call goes through', async () => {
    http = await startEverythingHttp();
    h = await startHarness({ overrides: { mcp: { servers: { ev: { url: http.url } } }, approvals: ALLOW } });
    await hasTool('mcp__ev__echo');
    h.llm.push({ toolCalls: [{ name: 'mcp__ev__echo', arguments: '{"message":"before"}' }] }, { text: 'one' });
    await h.send('first');
    await turnsDone(1);
    expect(toolMessages(1)[0]).toBe('Echo: before');
    const port = http.port;
    await http.kill();
    http = await startEverythingHttp(port);
    h.llm.push({ toolCalls: [{ name: 'mcp__ev__echo', arguments: '{"message":"after"}' }] }, { text: 'two' });
    await h.send('second');
    await turnsDone(2);
    expect(toolMessages(3).at(-1)).toBe('Echo: after');
    expect(source('ev')?.connection.state).toBe('ready');
  });

  it('fails clearly when the new session is refused as well', async () => {
    http = await startEverythingHttp();
    h = await startHarness({
      overrides: { mcp: { servers: { ev: { url: http.url, timeout_seconds: 5 } } }, approvals: ALLOW },
    });
    await hasTool('mcp__ev__echo');
    await http.kill();
    // Nothing listens any more: the session is gone and a new one cannot be opened.
    const { createServer } = await import('node:http');
    const refusing = createServer((_req, res) => {
      res
        .writeHead(404, { 'content-type': 'application/json' })
        .end('{"jsonrpc":"2.0","error":{"code":-32001,"message":"Session not found"},"id":null}');
    });
    await new Promise<void>((r) => refusing.listen(http?.port, '127.0.0.1', r));
    try {
      h.llm.push({ toolCalls: [{ name: 'mcp__ev__echo', arguments: '{"message":"x"}' }] }, { text: 'done' });
      await h.send('go');
      await turnsDone(1);
      expect(toolMessages(1)[0]).toMatch(
        /^Error: MCP server "ev" lost the session and a new one could not be opened \(HTTP 404\): .*Session not found/,
      );
    } finally {
      await new Promise((r) => refusing.close(r));
    }
  });
});
