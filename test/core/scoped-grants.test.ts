/**
 * A grant covers exactly what its card showed: "always" or "this session" on `bash ls` allows
 * `ls` and nothing else (not `ls; echo PWNED > …`), and the same for an MCP tool's arguments;
 * the card's "always" text says so.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ruleLine } from '../../src/core/rules.js';
import { allRules } from '../../src/store/repos/approvals.js';
import { startHarness, waitFor, type Harness } from '../helpers/harness.js';
import { startHttpFixture, type HttpFixture } from '../mcp/fixture-server.js';

let h: Harness | undefined;
let fixture: HttpFixture | undefined;
afterEach(async () => {
  await h?.close();
  await fixture?.close();
  h = undefined;
  fixture = undefined;
});

const harness = () => h as Harness;
const turnDone = (n: number) =>
  waitFor(() => harness().events.filter((e) => e.event.type === 'turn_done').length >= n, `${n} turn_done`, 20_000);
const approvalRequested = (n: number) =>
  waitFor(() => harness().channel.eventsOf('approval_requested')[n - 1], `approval_requested #${n}`, 20_000);
const call = (name: string, args: Record<string, unknown>) => ({
  toolCalls: [{ name, arguments: JSON.stringify(args) }],
});
const bash = (command: string) => call('bash', { command });
const toolStarts = () =>
  harness()
    .channel.eventsOf('tool_started')
    .map((e) => e.label);

describe('grants scoped to what the card showed', () => {
  it('"always" on `bash ls` runs `ls` again without asking but asks for `ls; echo PWNED > …`', async () => {
    h = await startHarness();
    const pwned = path.join(h.config.workspace.root, 'pwned.txt');
    h.llm.push(bash('ls'), { text: 'listed' });
    await h.send('list');
    const first = await approvalRequested(1);
    expect(first).toMatchObject({
      tool: 'bash',
      preview: 'workdir . · in the foreground, default timeout\n$ ls',
      alwaysCovers: 'bash with exactly command `ls`, workdir `.`, background false',
    });
    expect(
      (await h.core.decideApproval({ id: first.id, decision: 'approve', scope: 'always', by: 'test:u1' })).ok,
    ).toBe(true);
    await turnDone(1);

    h.llm.push(bash('ls; echo PWNED > pwned.txt'), { text: 'tried' });
    await h.send('again, with a tail', { chatKey: 'chat2' });
    const second = await approvalRequested(2);
    expect(second).toMatchObject({
      preview: 'workdir . · in the foreground, default timeout\n$ ls; echo PWNED > pwned.txt',
      alwaysCovers: 'bash with exactly command `ls; echo PWNED > pwned.txt`, workdir `.`, background false',
    });
    expect(existsSync(pwned)).toBe(false);
    await h.core.decideApproval({ id: second.id, decision: 'deny', by: 'test:u1' });
    await turnDone(2);
    expect(existsSync(pwned)).toBe(false);

    h.llm.push(bash('ls'), { text: 'listed again' });
    await h.send('list once more', { chatKey: 'chat3' });
    await turnDone(3);
    expect(h.channel.eventsOf('approval_requested')).toHaveLength(2);
    expect(toolStarts().filter((l) => l === 'bash ls')).toHaveLength(2);

    const rules = await allRules(h.core.db);
    expect(rules).toHaveLength(1);
    expect(rules[0]).toMatchObject({
      tool_glob: 'bash',
      path_glob: null,
      args_exact: '{"background":false,"command":"ls","workdir":"."}',
      grant_version: 2,
      user_id: 'test:u1',
    });
    expect(ruleLine(rules[0] as (typeof rules)[number])).toMatch(
      /^\d+ {2}bash {2}args:\{"background":false,"command":"ls","workdir":"\."\} {2}allow {2}user test:u1 {2}/,
    );
  });

  it('"this session" on `bash pwd` covers `pwd` in this conversation only, not `pwd && touch x`', async () => {
    h = await startHarness();
    h.llm.push(bash('pwd'), { text: 'one' });
    await h.send('where');
    const first = await approvalRequested(1);
    await h.core.decideApproval({ id: first.id, decision: 'approve', scope: 'session', by: 'test:u1' });
    await turnDone(1);
    h.llm.push(bash('pwd'), { text: 'two' }, bash('pwd && touch x'), { text: 'three' });
    await h.send('where again');
    await turnDone(2);
    expect(h.channel.eventsOf('approval_requested')).toHaveLength(1);
    await h.send('and touch');
    const second = await approvalRequested(2);
    expect(second.preview).toBe('workdir . · in the foreground, default timeout\n$ pwd && touch x');
    expect(existsSync(path.join(h.config.workspace.root, 'x'))).toBe(false);
    await h.core.decideApproval({ id: second.id, decision: 'deny', by: 'test:u1' });
    await turnDone(3);
    const rules = await allRules(h.core.db);
    expect(rules).toMatchObject([
      {
        tool_glob: 'bash',
        args_exact: '{"background":false,"command":"pwd","workdir":"."}',
        conversation_id: expect.any(String),
      },
    ]);
  });

  it('"always" on an MCP tool call covers those exact arguments only', async () => {
    fixture = await startHttpFixture();
    h = await startHarness({ overrides: { mcp: { servers: { fx: { url: fixture.url } } } } });
    h.llm.push(call('mcp__fx__echo', { text: 'hi' }), { text: 'one' });
    await h.send('echo hi');
    const first = await approvalRequested(1);
    expect(first.alwaysCovers).toBe('mcp__fx__echo with text exactly `hi`');
    await h.core.decideApproval({ id: first.id, decision: 'approve', scope: 'always', by: 'test:u1' });
    await turnDone(1);

    h.llm.push(call('mcp__fx__echo', { text: 'something else' }), { text: 'two' });
    await h.send('echo something else');
    const second = await approvalRequested(2);
    expect(second.alwaysCovers).toBe('mcp__fx__echo with text exactly `something else`');
    await h.core.decideApproval({ id: second.id, decision: 'deny', by: 'test:u1' });
    await turnDone(2);

    h.llm.push(call('mcp__fx__echo', { text: 'hi' }), { text: 'three' });
    await h.send('echo hi again');
    await turnDone(3);
    expect(h.channel.eventsOf('approval_requested')).toHaveLength(2);
    const results = h.llm
      .chatRequests()
      .at(-1)
      ?.body.messages.filter((m: any) => m.role === 'tool')
      .map((m: any) => m.content);
    expect(results?.at(-1)).toContain('hi');
  });
});
