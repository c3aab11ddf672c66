/**
 * `stop` and `newConversation` in a chat several people share: someone who is neither the
 * requester nor an admin stops only what they started.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SwitchboardError } from '../../src/errors.js';
import { startHarness, waitFor, type Harness } from '../helpers/harness.js';
import { runs, testTools } from '../helpers/test-tools.js';

let h: Harness;
beforeEach(async () => {
  for (const k of Object.keys(runs)) delete runs[k];
  h = await startHarness({
    tools: testTools,
    overrides: { access: { admins: ['test:admin'], allowed_users: ['test:u1', 'test:u2'] } },
  });
});
afterEach(async () => {
  await h?.close();
});

const chat = { channel: 'test', chatKey: 'chat1' };
const dangerCall = (target: string) => ({ toolCalls: [{ name: 'danger', arguments: JSON.stringify({ target }) }] });
const approvals = () =>
  h.core.db.selectFrom('approvals').select(['status', 'requester']).orderBy('created_at').execute();
const queued = () => h.core.db.selectFrom('inbox').select('author_id').where('consumed_at', 'is', null).execute();

async function refusal(p: Promise<unknown>): Promise<string> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(SwitchboardError);
  expect((err as SwitchboardError).code).toBe('not_allowed');
  return (err as Error).message;
}

describe('stop and new in a shared chat', () => {
  it("u2's stop leaves u1's waiting turn alone, drops only u2's own queued message, and says why", async () => {
    h.llm.push(dangerCall('a.txt'), { text: 'u1 done' }, { text: 'u2 answered' });
    await h.send('touch a.txt');
    await waitFor(() => h.channel.eventsOf('approval_requested')[0], 'u1 card');
    await h.send('and me?', { userId: 'u2' });
    await waitFor(async () => (await queued()).length === 1, 'u2 queued');

    const text = await refusal(h.core.stop(chat, 'test:u2'));
    expect(text).toBe(
      'Not stopped: the running turn was started by test:u1; only they or an admin can stop it. Your queued message was dropped.',
    );
    expect(await approvals()).toEqual([{ status: 'pending', requester: 'test:u1' }]);
    expect(await queued()).toEqual([]);
    expect(await refusal(h.core.newConversation(chat, 'test:u2'))).toBe(
      'Not started afresh: work of test:u1 is running or queued here; only they or an admin can start a new conversation now.',
    );
    expect(await approvals()).toEqual([{ status: 'pending', requester: 'test:u1' }]);
  });

  it("the requester's stop cancels their own turn but not the message someone else queued, which then runs", async () => {
    h.llm.push(dangerCall('b.txt'), { text: 'u2 answered' });
    await h.send('touch b.txt');
    await waitFor(() => h.channel.eventsOf('approval_requested')[0], 'u1 card');
    await h.send('my turn next', { userId: 'u2' });
    await waitFor(async () => (await queued()).length === 1, 'u2 queued');
    expect(await h.core.stop(chat, 'test:u1')).toBe(true);
    expect((await approvals())[0]?.status).toBe('cancelled');
    await waitFor(() => h.channel.eventsOf('reply').some((e) => e.text === 'u2 answered'), "u2's turn ran");
  });

  it('an admin stops and restarts anything', async () => {
    h.llm.push(dangerCall('c.txt'), { text: 'never' });
    await h.send('touch c.txt');
    await waitFor(() => h.channel.eventsOf('approval_requested')[0], 'u1 card');
    await h.core.newConversation(chat, 'test:admin');
    expect((await approvals())[0]?.status).toBe('cancelled');
  });
});
