/** Lazy MCP servers: hidden until `activate_tools`, the grant stored per conversation across restarts. */
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startHarness, waitFor, type Harness } from '../helpers/harness.js';
import { stdioServer } from './servers.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const request = (i: number) => (h as Harness).llm.chatRequests()[i]?.body;
const offered = (i: number): string[] => request(i)?.tools.map((t: any) => t.function.name) ?? [];
const turns = (n: number) =>
  waitFor(() => h?.events.filter((e) => e.event.type === 'turn_done').length === n, `${n} turns`, 20_000);

describe('lazy MCP servers', () => {
  it('stay out of the tool list until activate_tools, and the grant survives a restart', async () => {
    const log = path.join(os.tmpdir(), `mcp-lazy-${process.pid}-${Date.now()}.log`);
    h = await startHarness({
      overrides: {
        mcp: { servers: { fx: stdioServer(log, { lazy: true, description: 'echo and friends' }) } },
        approvals: { rules: [{ tool: 'mcp__fx__*', action: 'allow' }] },
      },
    });
    h.llm.push(
      { toolCalls: [{ name: 'mcp__fx__echo', arguments: '{"text":"too early"}' }] },
      { toolCalls: [{ name: 'activate_tools', arguments: '{"groups":["fx"]}' }] },
      { toolCalls: [{ name: 'mcp__fx__echo', arguments: '{"text":"now"}' }] },
      { text: 'done' },
    );
    await h.send('use fx');
    await turns(1);
    expect(offered(0)).toContain('activate_tools');
    expect(offered(0).filter((n) => n.startsWith('mcp__'))).toEqual([]);
    const system = request(0).messages[0].content as string;
    expect(system).toContain('activate_tools');
    expect(system).toContain('fx (echo and friends)');
    const tool = (i: number) =>
      request(i)
        .messages.filter((m: any) => m.role === 'tool')
        .at(-1)?.content;
    expect(tool(1)).toBe('Tool "mcp__fx__echo" is not active. Call activate_tools {"groups":["fx"]} first.');
    expect(tool(2)).toMatch(/^Activated\. Available from your next step:\nfx: .*mcp__fx__echo/);
    expect(offered(2)).toContain('mcp__fx__echo');
    expect(tool(3)).toBe('echo: now');
    // The system prompt stays byte-identical after the grant (prompt caches keep hitting).
    expect(request(3).messages[0].content).toBe(system);

    await h.restart();
    h.llm.push({ text: 'still there' });
    await h.send('again');
    await turns(2);
    expect(offered(4)).toContain('mcp__fx__echo');
    const grants = await h.core.db.selectFrom('tool_grants').selectAll().execute();
    expect(grants).toMatchObject([{ tool_group: 'fx', granted_by: 'test:u1' }]);
  });

  it('refuses an unknown group and grants nothing', async () => {
    h = await startHarness({
      overrides: { mcp: { servers: { fx: stdioServer('/dev/null', { lazy: true }) } }, tools: { deferred: false } },
    });
    h.llm.push({ toolCalls: [{ name: 'activate_tools', arguments: '{"groups":["nope"]}' }] }, { text: 'ok' });
    await h.send('go');
    await turns(1);
    const last = request(1)
      .messages.filter((m: any) => m.role === 'tool')
      .at(-1)?.content;
    expect(last).toBe('Unknown tool group(s): nope. Available groups: fx.');
    expect(await h.core.db.selectFrom('tool_grants').selectAll().execute()).toEqual([]);
  });
});
