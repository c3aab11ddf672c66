import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startHarness, waitFor, type Harness } from '../helpers/harness.js';
import { runs, testTools } from '../helpers/test-tools.js';

let h: Harness;

beforeEach(async () => {
  for (const k of Object.keys(runs)) delete runs[k];
});
afterEach(async () => {
  await h?.close();
});

const dangerCall = (target = 'a.txt') => ({ toolCalls: [{ name: 'danger', arguments: JSON.stringify({ target }) }] });
const turnDone = (n = 1) =>
  waitFor(() => h.events.filter((e) => e.event.type === 'turn_done').length >= n, `${n} turn_done`);
const approvalRequested = (n = 1) =>
  waitFor(() => {
    const list = h.channel.eventsOf('approval_requested');
    return list.length >= n ? list[n - 1] : undefined;
  }, 'approval_requested');
const toolResults = (req: number) =>
  h.llm
    .chatRequests()
    [req]?.body.messages.filter((m: any) => m.role === 'tool')
    .map((m: any) => m.content);

describe('approvals', () => {
  beforeEach(async () => {
    h = await startHarness({
      tools: testTools,
      overrides: { access: { admins: ['test:admin'], allowed_users: ['test:u1', 'test:u2'] } },
    });
  });

  it('asks before a tool that requires approval, runs it once when approved once, and asks again next time', async () => {
    h.llm.push(dangerCall(), { text: 'done 1' }, dangerCall(), { text: 'done 2' });
    await h.send('do it');
    const req = await approvalRequested();
    expect(req).toMatchObject({
      tool: 'danger',
      label: 'danger a.txt',
      preview: 'would touch a.txt',
      requester: 'test:u1',
    });
    expect(runs.danger).toBeUndefined();
    const status = await h.core.status({ channel: 'test', chatKey: 'chat1' });
    expect(status).toMatchObject({ turn: 'waiting', pendingApprovals: 1 });

    const r = await h.core.decideApproval({ id: req.id, decision: 'approve', scope: 'once', by: 'test:u1' });
    expect(r.ok).toBe(true);
    await turnDone();
    expect(runs.danger).toBe(1);
    expect(toolResults(1)).toEqual(['touched a.txt']);
    expect(h.channel.eventsOf('approval_resolved')[0]).toMatchObject({
      decision: 'approved',
      scope: 'once',
      by: 'test:u1',
    });

    await h.send('again');
    await approvalRequested(2);
    expect(runs.danger).toBe(1);
  });

  it('approve for this session stops asking in this conversation only', async () => {
    h.llm.push(dangerCall(), { text: 'one' }, dangerCall('b'), { text: 'two' });
    await h.send('first');
    const req = await approvalRequested();
    await h.core.decideApproval({ id: req.id, decision: 'approve', scope: 'session', by: 'test:u1' });
    await turnDone();
    await h.send('second');
    await turnDone(2);
    expect(runs.danger).toBe(2);
    expect(h.channel.eventsOf('approval_requested')).toHaveLength(1);

    h.llm.push(dangerCall('c'), { text: 'three' });
    await h.send('other chat', { chatKey: 'chat2' });
    await approvalRequested(2);
    expect(runs.danger).toBe(2);
  });

  it('always covers the tool on the asked path for the requester, in every conversation and across a restart', async () => {
    h.llm.push(dangerCall(), { text: 'one' });
    await h.send('first');
    const req = await approvalRequested();
    expect(req.alwaysCovers).toBe('danger on a.txt');
    await h.core.decideApproval({ id: req.id, decision: 'approve', scope: 'always', by: 'test:u1' });
    await turnDone();
    await h.restart();
    // Same tool, same path, same user, another conversation: runs without asking.
    h.llm.push(dangerCall('a.txt'), { text: 'two' });
    await h.send('elsewhere', { chatKey: 'chat9' });
    await turnDone(2);
    expect(runs.danger).toBe(2);
    expect(h.channel.eventsOf('approval_requested')).toHaveLength(0);
    // Another path asks again; so does another user on the same path.
    h.llm.push(dangerCall('z.txt'));
    await h.send('other path', { chatKey: 'chat9' });
    expect((await approvalRequested(1)).label).toBe('danger z.txt');
    h.llm.push(dangerCall('a.txt'));
    await h.send('other user', { chatKey: 'chat7', userId: 'u2' });
    expect((await approvalRequested(2)).requester).toBe('test:u2');
    expect(runs.danger).toBe(2);
    const rules = await h.core.db.selectFrom('approval_rules').selectAll().execute();
    expect(rules).toHaveLength(1);
    expect(rules[0]).toMatchObject({
      tool_glob: 'danger',
      path_glob: 'a.txt',
      action: 'allow',
      conversation_id: null,
      user_id: 'test:u1',
      created_by: 'test:u1',
    });
  });

  it('a path with glob characters is granted literally', async () => {
    h.llm.push(dangerCall('[ab]*.txt'), { text: 'one' }, dangerCall('a.txt'));
    await h.send('first');
    const req = await approvalRequested();
    await h.core.decideApproval({ id: req.id, decision: 'approve', scope: 'always', by: 'test:u1' });
    await turnDone();
    await h.send('second');
    expect((await approvalRequested(2)).label).toBe('danger a.txt');
  });

  it('rules are listed and revoked: their user and admins may, others may not', async () => {
    h.llm.push(dangerCall(), { text: 'one' });
    await h.send('first');
    const req = await approvalRequested();
    await h.core.decideApproval({ id: req.id, decision: 'approve', scope: 'always', by: 'test:u1' });
    await turnDone();
    const [rule] = await h.core.listRules('test:u1');
    expect(rule).toMatchObject({ tool_glob: 'danger', path_glob: 'a.txt', user_id: 'test:u1' });
    expect(await h.core.listRules('test:u2')).toEqual([]);
    expect(await h.core.listRules('test:admin')).toHaveLength(1);
    expect(await h.core.revokeRule(rule!.id, 'test:u2')).toEqual({
      ok: false,
      reason: `no rule #${rule!.id} of yours`,
    });
    expect(await h.core.listRules('test:admin')).toHaveLength(1);
    expect(await h.core.revokeRule(rule!.id, 'test:u1')).toMatchObject({ ok: true });
    expect(await h.core.listRules('test:admin')).toEqual([]);
    h.llm.push(dangerCall());
    await h.send('again');
    await approvalRequested(2);
  });

  it('deny with a note passes the note to the model and does not run the tool', async () => {
    h.llm.push(dangerCall(), { text: 'understood' });
    await h.send('do it');
    const req = await approvalRequested();
    const r = await h.core.decideApproval({ id: req.id, decision: 'deny', by: 'test:u1', note: 'use b.txt instead' });
    expect(r.ok).toBe(true);
    await turnDone();
    expect(runs.danger).toBeUndefined();
    expect(toolResults(1)?.[0]).toBe('The user denied this tool call. Their note: use b.txt instead');
    expect(h.channel.eventsOf('tool_finished')[0]).toMatchObject({ status: 'rejected' });
  });

  it('deny awaiting a note takes the requester’s next message as the note', async () => {
    h.llm.push(dangerCall(), { text: 'ok' });
    await h.send('do it');
    const req = await approvalRequested();
    const r = await h.core.decideApproval({ id: req.id, decision: 'deny', by: 'test:u1', awaitNote: true });
    expect(r.ok && r.approval.status).toBe('awaiting_note');
    await waitFor(
      () => h.channel.eventsOf('approval_resolved').find((e) => e.decision === 'awaiting_note'),
      'awaiting_note event',
    );
    const s = await h.send('too risky today');
    expect(s.status).toBe('note_recorded');
    await turnDone();
    expect(toolResults(1)?.[0]).toMatch(/Their note: too risky today/);
    // The note did not also become a user message.
    expect(h.llm.chatRequests()[1]?.body.messages.filter((m: any) => m.role === 'user')).toHaveLength(1);
  });

  it('refuses a decision from someone who may not decide and changes nothing; an admin may', async () => {
    h.llm.push(dangerCall(), { text: 'ok' });
    await h.send('do it');
    const req = await approvalRequested();
    const before = await h.core.db.selectFrom('approvals').selectAll().executeTakeFirstOrThrow();
    const r = await h.core.decideApproval({ id: req.id, decision: 'approve', by: 'test:u2' });
    expect(r).toMatchObject({ ok: false, reason: 'not_allowed' });
    const after = await h.core.db.selectFrom('approvals').selectAll().executeTakeFirstOrThrow();
    expect(after).toEqual(before);
    expect(runs.danger).toBeUndefined();

    const unknown = await h.core.decideApproval({ id: 'no-such-id', decision: 'approve', by: 'test:u1' });
    expect(unknown).toMatchObject({ ok: false, reason: 'unknown' });

    const admin = await h.core.decideApproval({ id: req.id, decision: 'approve', by: 'test:admin' });
    expect(admin.ok).toBe(true);
    await turnDone();
    expect(runs.danger).toBe(1);
    const again = await h.core.decideApproval({ id: req.id, decision: 'deny', by: 'test:u1' });
    expect(again).toMatchObject({ ok: false, reason: 'already_decided' });
  });

  it('a deny rule hides the tool from the model; a require rule on a path asks even for allowed tools', async () => {
    await h.close();
    h = await startHarness({
      tools: testTools,
      overrides: {
        approvals: {
          rules: [
            { tool: 'sleep', action: 'deny' },
            { tool: 'echo', action: 'require', priority: 5 },
          ],
        },
      },
    });
    h.llm.push({ toolCalls: [{ name: 'echo', arguments: '{"text":"x"}' }] }, { text: 'ok' });
    await h.send('go');
    await approvalRequested();
    const offered = h.llm.chatRequests()[0]?.body.tools.map((t: any) => t.function.name);
    expect(offered).not.toContain('sleep');
    expect(offered).toContain('echo');
  });
});

describe('approval timeout', () => {
  it('an expired approval becomes rejected with a message the model sees', async () => {
    h = await startHarness({ tools: testTools, overrides: { approvals: { timeout_seconds: 1 } } });
    h.llm.push(dangerCall(), { text: 'gave up' });
    await h.send('do it');
    const req = await approvalRequested();
    await turnDone();
    expect(runs.danger).toBeUndefined();
    expect(toolResults(1)?.[0]).toMatch(/timed out/);
    expect(h.channel.eventsOf('approval_resolved')[0]).toMatchObject({ decision: 'expired' });
    const late = await h.core.decideApproval({ id: req.id, decision: 'approve', by: 'test:u1' });
    expect(late).toMatchObject({ ok: false, reason: 'expired' });
  });
});

describe('restart while an approval is pending', () => {
  it('re-emits the approval, which still resolves; the tool runs once and the reply comes once', async () => {
    h = await startHarness({ tools: testTools });
    h.llm.push(dangerCall());
    await h.send('do it');
    const req = await approvalRequested();
    await h.restart();
    // The new core re-emits the pending approval for the restarted client.
    const replayed = await waitFor(
      () => h.channel.eventsOf('approval_requested').find((e) => e.replay),
      'replayed approval',
    );
    expect(replayed.id).toBe(req.id);
    h.llm.push({ text: 'finished after restart' });
    const r = await h.core.decideApproval({ id: req.id, decision: 'approve', by: 'test:u1' });
    expect(r.ok).toBe(true);
    await waitFor(() => h.channel.eventsOf('turn_done').length === 1, 'turn_done on the new core');
    await h.core.idle();
    expect(runs.danger).toBe(1);
    expect(h.channel.eventsOf('reply').map((e) => e.text)).toEqual(['finished after restart']);
    expect(h.llm.chatRequests()).toHaveLength(2);
  });

  it('re-gates a tool call a shutdown left running (the core reopened in this process on the same database) and runs it again', async () => {
    h = await startHarness({ tools: testTools });
    h.llm.push({ toolCalls: [{ name: 'sleep', arguments: '{}' }] });
    await h.send('sleep');
    await waitFor(() => runs.sleep === 1, 'sleep running');
    await h.restart(); // shutdown interrupts the tool and leaves it `running` in the database
    await waitFor(() => runs.sleep === 2, 'sleep re-run after restart');
    const row = await h.core.db.selectFrom('tool_calls').select(['status', 'attempt']).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ status: 'running', attempt: 1 });
  });

  it('answers a queued message that was never answered before the restart', async () => {
    h = await startHarness({ tools: testTools });
    h.llm.push({ hang: true });
    await h.send('are you there?');
    await waitFor(() => h.llm.chatRequests().length === 1, 'first model call');
    await h.restart();
    await waitFor(() => h.channel.eventsOf('reply').length === 1, 'reply after restart');
    expect(h.channel.eventsOf('reply')[0]?.text).toBe('ok');
    expect(h.llm.chatRequests()).toHaveLength(2);
  });
});
