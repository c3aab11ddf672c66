/**
 * The MCP client against a real SDK server, over stdio (a child process) and over Streamable HTTP
 * on loopback: catalog with pagination and naming, calls, images, isError, caps, progress and
 * timeouts, cancellation by stop, list_changed.
 */
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { configSchema } from '../../src/config.js';
import { startHarness, waitFor, type Harness } from '../helpers/harness.js';
import { LONG_TOOL, PIXEL_PNG, startHttpFixture, type HttpFixture } from './fixture-server.js';
import { serverLog, serverPids, stdioServer } from './servers.js';

const ALLOW_FX = { rules: [{ tool: 'mcp__fx__*', action: 'allow' }] };

let h: Harness | undefined;
let fixture: HttpFixture | undefined;
afterEach(async () => {
  await h?.close();
  await fixture?.close();
  h = undefined;
  fixture = undefined;
});

type Mode = 'stdio' | 'http';

/** Start a harness with the fixture server `fx` over `mode`; returns a reader of the server's log. */
async function start(
  mode: Mode,
  server: Record<string, unknown> = {},
  approvals: Record<string, unknown> = ALLOW_FX,
  env: Record<string, string> = {},
) {
  let entry: Record<string, unknown>;
  let log: () => string[];
  if (mode === 'http') {
    fixture = await startHttpFixture();
    const f = fixture;
    entry = { url: f.url, ...server };
    log = () => f.events;
  } else {
    const dir = (await import('node:os')).tmpdir();
    const file = path.join(dir, `mcp-fixture-${process.pid}-${Date.now()}-${Math.random().toString(36).slice(2)}.log`);
    entry = stdioServer(file, server, env);
    log = () => serverLog(file);
  }
  h = await startHarness({ overrides: { mcp: { servers: { fx: entry } }, approvals } });
  return log;
}

const toolsOffered = (round: number): string[] =>
  (h as Harness).llm.chatRequests()[round]?.body.tools.map((t: any) => t.function.name) ?? [];
const toolMessages = (round: number): string[] =>
  (h as Harness).llm
    .chatRequests()
    [round]?.body.messages.filter((m: any) => m.role === 'tool')
    .map((m: any) => m.content) ?? [];
const turnDone = () => waitFor(() => h?.events.some((e) => e.event.type === 'turn_done'), 'turn_done', 20_000);

describe.each(['stdio', 'http'] as const)('MCP over %s', (mode) => {
  it('lists every page of tools under mcp__fx__ names, sanitised, capped at 64 and without silent shadowing', async () => {
    await start(mode);
    const names =
      h?.core.registry
        .all()
        .map((t) => t.name)
        .filter((n) => n.startsWith('mcp__')) ?? [];
    // 10 tools over 4 pages; dotted.name and dotted_name both become dotted_name: the second is refused.
    expect(names).toContain('mcp__fx__echo');
    expect(names).toContain('mcp__fx__dotted_name');
    expect(names).toContain('mcp__fx__big');
    expect(names).toHaveLength(9);
    const long = names.find((n) => n.startsWith('mcp__fx__a_tool_with'));
    expect(long?.length).toBe(64);
    expect(long).not.toBe(`mcp__fx__${LONG_TOOL}`);
    const status = h?.core.toolSources().find((s) => s.name === 'mcp:fx');
    expect(status).toMatchObject({ state: 'ready', kind: mode === 'http' ? 'http' : 'stdio' });
    expect(status?.refused).toEqual([
      expect.stringContaining('mcp__fx__dotted_name: tool "mcp__fx__dotted_name" of mcp:fx collides'),
    ]);
    // readOnlyHint is shown on the card and changes nothing else: the tool still asks.
    const image = h?.core.registry.get('mcp__fx__image');
    expect(image?.preview?.({})).toMatch(/^read-only \(as the server declares\)\nfx → image/);
    expect(image?.meta.defaultApproval).toBe('require');
    const known = await h?.core.db
      .selectFrom('known_tools')
      .select(['name', 'source'])
      .where('name', '=', 'mcp__fx__echo')
      .executeTakeFirst();
    expect(known).toEqual({ name: 'mcp__fx__echo', source: 'mcp:fx' });
  });

  it('asks for approval by default, then calls the tool and gives the text to the model', async () => {
    await start(mode, {}, { rules: [] });
    h?.llm.push({ toolCalls: [{ name: 'mcp__fx__echo', arguments: '{"text":"hi"}' }] }, { text: 'done' });
    await h?.send('echo hi');
    const req = await waitFor(() => h?.channel.eventsOf('approval_requested')[0], 'approval card');
    expect(req).toMatchObject({ tool: 'mcp__fx__echo', label: 'fx.echo hi' });
    expect(req.preview).toContain('"text": "hi"');
    expect(toolsOffered(0)).toContain('mcp__fx__echo');
    await h?.core.decideApproval({ id: req.id, decision: 'approve', by: 'test:u1' });
    await turnDone();
    expect(toolMessages(1)).toEqual(['echo: hi']);
  });

  it('saves an image result under the workspace and sends it to the chat', async () => {
    await start(mode);
    h?.llm.push({ toolCalls: [{ name: 'mcp__fx__image', arguments: '{}' }] }, { text: 'done' });
    await h?.send('picture');
    await turnDone();
    const [sent] = h?.channel.files ?? [];
    expect(sent?.file.kind).toBe('photo');
    expect(sent?.file.path.startsWith(path.join(h?.dir as string, 'workspace', 'mcp-output', 'fx'))).toBe(true);
    expect(readFileSync(sent?.file.path as string).toString('base64')).toBe(PIXEL_PNG);
    expect(toolMessages(1)[0]).toMatch(
      /^here is a pixel\n\[image\/png saved to mcp-output\/fx\/.*\.png and shown in the chat\]$/,
    );
  });

  it('turns isError into a failed tool result the model sees, and caps huge results with a notice', async () => {
    await start(mode);
    h?.llm.push(
      {
        toolCalls: [
          { name: 'mcp__fx__fail', arguments: '{}' },
          { name: 'mcp__fx__big', arguments: '{}' },
        ],
      },
      { text: 'done' },
    );
    await h?.send('go');
    await turnDone();
    const [failed, big] = toolMessages(1);
    expect(failed).toBe('Error from MCP server "fx": the thing is broken');
    expect(big?.length).toBeLessThan(51_000);
    expect(big).toMatch(/\[result truncated: 50000 of 200000 characters shown\]$/);
    // The two calls run in parallel: either may finish first.
    expect(
      h?.channel
        .eventsOf('tool_finished')
        .map((e) => e.status)
        .sort(),
    ).toEqual(['done', 'failed']);
  });

  it('cancels a slow call on stop, and the server sees the cancellation', async () => {
    const log = await start(mode);
    h?.llm.push({ toolCalls: [{ name: 'mcp__fx__slow', arguments: '{"seconds":30}' }] });
    await h?.send('slow');
    await waitFor(() => log().includes('called slow'), 'server got the call', 15_000);
    await waitFor(() => h?.channel.eventsOf('tool_output').length, 'a progress line');
    expect(h?.channel.eventsOf('tool_output')[0]?.text).toMatch(/^working \d+\/300/);
    await h?.core.stop({ channel: 'test', chatKey: 'chat1' }, 'test:u1');
    await waitFor(() => log().includes('cancelled slow'), 'server saw notifications/cancelled', 10_000);
    const call = await h?.core.db.selectFrom('tool_calls').select('status').executeTakeFirst();
    expect(call?.status).toBe('cancelled');
  });

  it('lets progress extend the timeout, and cancels a quiet call when the timeout passes', async () => {
    // Progress every 0.1 s keeps a 1 s timeout from firing during a 2 s call; a quiet call times out.
    const log = await start(mode, { timeout_seconds: 1 });
    h?.llm.push(
      { toolCalls: [{ name: 'mcp__fx__slow', arguments: '{"seconds":2,"progress_ms":100}' }] },
      { toolCalls: [{ name: 'mcp__fx__slow', arguments: '{"seconds":5,"quiet":true}' }] },
      { text: 'done' },
    );
    await h?.send('go');
    await turnDone();
    expect(toolMessages(1)).toEqual(['slow done']);
    expect(toolMessages(2)[1]).toMatch(/^Error: MCP server "fx", tool slow: .*Request timed out/);
    await waitFor(() => log().includes('cancelled slow'), 'server saw the cancellation of the timed-out call', 10_000);
  });

  it('refreshes the catalog on list_changed for the next model round', async () => {
    await start(mode);
    h?.llm.push({ toolCalls: [{ name: 'mcp__fx__add_tool', arguments: '{}' }] }, { text: 'added it' });
    await h?.send('add');
    await turnDone();
    await waitFor(() => h?.core.registry.get('mcp__fx__extra'), 'extra tool in the catalog');
    h?.llm.push({ toolCalls: [{ name: 'mcp__fx__extra', arguments: '{}' }] }, { text: 'done' });
    await h?.send('use it');
    await waitFor(() => h?.events.filter((e) => e.event.type === 'turn_done').length === 2, 'second turn');
    expect(toolsOffered(0)).not.toContain('mcp__fx__extra');
    expect(toolsOffered(2)).toContain('mcp__fx__extra');
    expect(toolMessages(3)).toEqual(['added', 'extra tool ran']);
  });
});

describe('MCP server failures', () => {
  it('reconnects a stdio server that crashed mid-call; the call fails, the next one works', async () => {
    const log = await start('stdio');
    const firstPid = h?.core.toolSources().find((s) => s.name === 'mcp:fx');
    expect(firstPid?.state).toBe('ready');
    h?.llm.push(
      { toolCalls: [{ name: 'mcp__fx__crash', arguments: '{}' }] },
      { toolCalls: [{ name: 'mcp__fx__echo', arguments: '{"text":"again"}' }] },
      { text: 'done' },
    );
    await h?.send('crash');
    await turnDone();
    expect(toolMessages(1)[0]).toMatch(/^Error: MCP server "fx", tool crash: .*(closed|Connection)/i);
    // The echo of round 2 may have raced the reconnect; either way the server comes back.
    await waitFor(() => log().filter((l) => l.startsWith('pid ')).length === 2, 'a second server process', 15_000);
    await waitFor(
      () => h?.core.toolSources().find((s) => s.name === 'mcp:fx')?.state === 'ready',
      'ready again',
      15_000,
    );
    h?.llm.push({ toolCalls: [{ name: 'mcp__fx__echo', arguments: '{"text":"back"}' }] }, { text: 'done' });
    await h?.send('again');
    await waitFor(() => h?.llm.chatRequests().length === 5, 'the follow-up round', 15_000);
    expect(toolMessages(4)).toContain('echo: back');
  });

  it("answers 'server unavailable' while a crashed server reconnects; the rest of the catalog stays", async () => {
    // The restarted server is held back until the turn is over.
    const gate = path.join(os.tmpdir(), `mcp-gate-${process.pid}-${Date.now()}-${Math.random().toString(36).slice(2)}`);
    const log = await start('stdio', {}, ALLOW_FX, { FIXTURE_RESTART_GATE: gate });
    const [pid] = serverPids(log());
    process.kill(pid as number, 'SIGKILL');
    await waitFor(() => h?.core.toolSources().find((s) => s.name === 'mcp:fx')?.state !== 'ready', 'server seen gone');
    h?.llm.push(
      {
        toolCalls: [
          { name: 'mcp__fx__echo', arguments: '{"text":"anyone?"}' },
          // A built-in that runs in-process (math would first load mathjs in a worker: seconds on a busy machine).
          { name: 'write_todos', arguments: '{"todos":[{"content":"ask again later","status":"pending"}]}' },
        ],
      },
      { text: 'done' },
    );
    await h?.send('try');
    await turnDone();
    const [echo, todos] = toolMessages(1);
    expect(echo).toMatch(/^Error: MCP server "fx" is unavailable \((connecting|disconnected)/);
    expect(todos).toContain('1. ask again later');
    expect(h?.core.registry.get('mcp__fx__echo')).toBeTruthy();
    writeFileSync(gate, '');
    await waitFor(
      () => h?.core.toolSources().find((s) => s.name === 'mcp:fx')?.state === 'ready',
      'reconnected',
      15_000,
    );
    expect(log()).toContain('held');
    rmSync(gate, { force: true });
  });

  it('never blocks start-up on a failing server: the rest of the catalog works and the server is retried', async () => {
    h = await startHarness({
      overrides: {
        mcp: {
          connect_timeout_seconds: 20,
          servers: { broken: { command: '/nonexistent/mcp-server' }, fx: stdioServer('/dev/null') },
        },
        approvals: ALLOW_FX,
      },
    });
    const broken = () => h?.core.toolSources().find((s) => s.name === 'mcp:broken');
    expect(broken()?.state).not.toBe('ready');
    expect(broken()?.error).toBeTruthy();
    // Retried with backoff: a failed attempt schedules the next one later each time.
    const first = await waitFor(() => broken()?.retryAt, 'a scheduled retry');
    await waitFor(() => (broken()?.retryAt ?? 0) > first + 1000, 'a later retry after another failure', 10_000);
    h.llm.push({ toolCalls: [{ name: 'mcp__fx__echo', arguments: '{"text":"still here"}' }] }, { text: 'done' });
    await h.send('go');
    await turnDone();
    expect(toolMessages(1)).toEqual(['echo: still here']);
  });

  it('refuses an MCP tool whose name a built-in already has, and keeps the built-in', async () => {
    const { defaultToolset } = await import('../../src/compose.js');
    const { testTools } = await import('../helpers/test-tools.js');
    const impostor = { ...testTools[0], name: 'mcp__fx__echo' } as (typeof testTools)[number];
    const file = path.join((await import('node:os')).tmpdir(), `mcp-collide-${Date.now()}.log`);
    h = await startHarness({
      tools: [...defaultToolset(configSchema.parse({})).tools, impostor],
      overrides: { mcp: { servers: { fx: stdioServer(file) } } },
    });
    expect(h.core.registry.get('mcp__fx__echo')).toBe(impostor);
    const status = h.core.toolSources().find((s) => s.name === 'mcp:fx');
    expect(status?.refused).toContainEqual(expect.stringContaining('collides with the one from'));
    expect(status?.tools).not.toContain('mcp__fx__echo');
    expect(existsSync(file)).toBe(true);
  });
});
