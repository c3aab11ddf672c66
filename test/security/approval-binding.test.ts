/**
 * A decision binds to the exact arguments its card showed, and a grant covers exactly what the
 * card named. An approval row records the sha256 of the call's canonical arguments; arguments
 * that hash otherwise when the call is about to run are asked about again, never run. "Always"
 * for `bash ls` covers `ls` in the workspace, in the foreground — not `ls` with another workdir
 * or in the background — while a grant stored before keeps the reach it was recorded with.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { allRules, insertRule } from '../../src/store/repos/approvals.js';
import { type Harness, startHarness, waitFor } from '../helpers/harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const harness = () => h as Harness;
const turnDone = (n: number) =>
  waitFor(() => harness().events.filter((e) => e.event.type === 'turn_done').length >= n, `${n} turn_done`, 20_000);
const approvalRequested = (n: number) =>
  waitFor(() => harness().channel.eventsOf('approval_requested')[n - 1], `approval_requested #${n}`, 20_000);
const bash = (args: Record<string, unknown>) => ({ toolCalls: [{ name: 'bash', arguments: JSON.stringify(args) }] });
/** bash calls that ran (denied and refused ones end `rejected`). */
const started = () =>
  harness()
    .channel.eventsOf('tool_finished')
    .filter((e) => e.name === 'bash' && (e.status === 'done' || e.status === 'failed')).length;
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const workspace = () => harness().config.workspace.root;

describe('a decision binds to the arguments its card showed', () => {
  it('records the sha256 of the canonical arguments, and asks again when the arguments to run differ', async () => {
    h = await startHarness();
    h.llm.push(bash({ command: 'echo safe > safe.txt' }), { text: 'done' });
    await h.send('write safe');
    const first = await approvalRequested(1);
    const row = await h.core.db
      .selectFrom('approvals')
      .selectAll()
      .where('id', '=', first.id)
      .executeTakeFirstOrThrow();
    expect(row.args_sha256).toBe(sha256('{"command":"echo safe > safe.txt"}'));
    // The arguments change after the card was made (another process, a re-gated call after a
    // restart read differently): the approval of the card must not run them.
    await h.core.db
      .updateTable('tool_calls')
      .set({ args: JSON.stringify({ command: 'touch pwned.txt' }) })
      .where('id', '=', row.tool_call_id)
      .execute();
    expect((await h.core.decideApproval({ id: first.id, decision: 'approve', by: 'test:u1' })).ok).toBe(true);
    const second = await approvalRequested(2);
    expect(second.preview).toContain('$ touch pwned.txt');
    expect(second.callId).toBe(first.callId);
    expect(existsSync(path.join(workspace(), 'pwned.txt'))).toBe(false);
    expect(started()).toBe(0);
    await h.core.decideApproval({ id: second.id, decision: 'deny', by: 'test:u1' });
    await turnDone(1);
    expect(existsSync(path.join(workspace(), 'pwned.txt'))).toBe(false);
    expect(existsSync(path.join(workspace(), 'safe.txt'))).toBe(false);
  });

  it('an approval recorded before the binding (no hash) is asked again rather than run', async () => {
    h = await startHarness();
    h.llm.push(bash({ command: 'touch old.txt' }), { text: 'done' });
    await h.send('touch');
    const first = await approvalRequested(1);
    await h.core.db.updateTable('approvals').set({ args_sha256: null }).where('id', '=', first.id).execute();
    await h.core.decideApproval({ id: first.id, decision: 'approve', by: 'test:u1' });
    const second = await approvalRequested(2);
    expect(second.preview).toContain('$ touch old.txt');
    expect(existsSync(path.join(workspace(), 'old.txt'))).toBe(false);
    await h.core.decideApproval({ id: second.id, decision: 'approve', by: 'test:u1' });
    await turnDone(1);
    expect(existsSync(path.join(workspace(), 'old.txt'))).toBe(true);
  });
});

describe('a grant covers exactly what the card named', () => {
  it('"always" for `ls` covers `ls` here in the foreground, not in another workdir or in the background', async () => {
    h = await startHarness();
    mkdirSync(path.join(workspace(), 'sub'));
    h.llm.push(bash({ command: 'ls' }), { text: 'one' });
    await h.send('list');
    const first = await approvalRequested(1);
    expect(first.alwaysCovers).toBe('bash with exactly command `ls`, workdir `.`, background false');
    await h.core.decideApproval({ id: first.id, decision: 'approve', scope: 'always', by: 'test:u1' });
    await turnDone(1);
    expect(await allRules(h.core.db)).toMatchObject([
      { args_exact: '{"background":false,"command":"ls","workdir":"."}', grant_version: 2 },
    ]);

    h.llm.push(bash({ command: 'ls', workdir: 'sub' }), { text: 'two' });
    await h.send('list sub', { chatKey: 'chat2' });
    const inSub = await approvalRequested(2);
    expect(inSub.preview).toBe('workdir sub · in the foreground, default timeout\n$ ls');
    await h.core.decideApproval({ id: inSub.id, decision: 'deny', by: 'test:u1' });
    await turnDone(2);

    h.llm.push(bash({ command: 'ls', background: true }), { text: 'three' });
    await h.send('list in the background', { chatKey: 'chat3' });
    const inBackground = await approvalRequested(3);
    expect(inBackground.preview).toBe('workdir . · in the background\n$ ls');
    await h.core.decideApproval({ id: inBackground.id, decision: 'deny', by: 'test:u1' });
    await turnDone(3);
    expect(started()).toBe(1);

    // What the card named, spelled either way, runs without asking (the timeout is not part of it).
    h.llm.push(bash({ command: 'ls', workdir: '.', background: false, timeout: 5 }), { text: 'four' });
    await h.send('list again', { chatKey: 'chat4' });
    await turnDone(4);
    expect(h.channel.eventsOf('approval_requested')).toHaveLength(3);
    expect(started()).toBe(2);
  });

  it('"this session" is scoped the same way', async () => {
    h = await startHarness();
    mkdirSync(path.join(workspace(), 'sub'));
    h.llm.push(bash({ command: 'pwd' }), { text: 'one' });
    await h.send('where');
    const first = await approvalRequested(1);
    await h.core.decideApproval({ id: first.id, decision: 'approve', scope: 'session', by: 'test:u1' });
    await turnDone(1);
    h.llm.push(bash({ command: 'pwd', workdir: 'sub' }), { text: 'two' });
    await h.send('where in sub');
    const second = await approvalRequested(2);
    expect(second.preview).toContain('workdir sub');
    await h.core.decideApproval({ id: second.id, decision: 'deny', by: 'test:u1' });
    await turnDone(2);
    expect(started()).toBe(1);
  });

  it('a grant stored before keeps its reach: `pwd` in any workdir, and nothing but `pwd`', async () => {
    h = await startHarness();
    mkdirSync(path.join(workspace(), 'sub'));
    // A row as the previous version wrote it: the command alone, no grant_version given.
    await insertRule(h.core.db, {
      tool_glob: 'bash',
      path_glob: null,
      args_exact: '{"command":"pwd"}',
      action: 'allow',
      priority: 0,
      conversation_id: null,
      user_id: 'test:u1',
      created_by: 'test:u1',
    });
    expect(await allRules(h.core.db)).toMatchObject([{ grant_version: 1 }]);
    h.llm.push(bash({ command: 'pwd', workdir: 'sub' }), bash({ command: 'pwd', background: true }), {
      text: 'both ran',
    });
    await h.send('where, twice');
    await turnDone(1);
    expect(h.channel.eventsOf('approval_requested')).toHaveLength(0);
    expect(started()).toBe(2);

    h.llm.push(bash({ command: 'pwd; touch x' }), { text: 'asked' });
    await h.send('and touch', { chatKey: 'chat2' });
    const asked = await approvalRequested(1);
    await h.core.decideApproval({ id: asked.id, decision: 'deny', by: 'test:u1' });
    await turnDone(2);
    expect(existsSync(path.join(workspace(), 'x'))).toBe(false);
  });
});
