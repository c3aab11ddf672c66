import { afterEach, describe, expect, it } from 'vitest';
import { insertJob } from '../../src/store/repos/jobs.js';
import { blockAction, slashCommand } from '../emulators/slack-payloads.js';
import { ALICE, BOB, type SlackStack, startSlackStack, visibleText, waitFor } from '../slack/stack.js';

let stack: SlackStack;
afterEach(async () => {
  await stack?.close();
});

function ack(res: { status: number; body: string }): { text: string; blocks: any[] } {
  expect(res.status).toBe(200);
  const body = JSON.parse(res.body) as { response_type?: string; text?: string; blocks?: any[] };
  expect(body.response_type).toBe('ephemeral');
  return { text: body.text ?? '', blocks: body.blocks ?? [] };
}

describe('slack: /switchboard jobs and sethome', () => {
  it('sethome makes a channel the home of notify; jobs lists with buttons that obey owner rules', async () => {
    stack = await startSlackStack('http');
    const cmd = (text: string, user = ALICE, channel = 'D1') =>
      stack.emu.deliver('slash_commands', slashCommand({ user, channel, text }));
    expect(ack(await cmd('sethome', ALICE, 'C0HOME')).text).toContain('receives your notifications');

    stack.llm.push(
      { toolCalls: [{ name: 'notify', arguments: '{"text":"deploy *finished*","title":"Deploys"}' }] },
      { text: 'told you' },
    );
    await stack.sendEvent(stack.emu.userMessage({ channel: 'D1', user: ALICE, text: 'tell me when deployed' }));
    await waitFor(() => stack.findBot('C0HOME', 'deploy').length, 'the notification in the home channel');
    const [note] = stack.findBot('C0HOME', 'deploy');
    expect(visibleText(note!)).toBe('🔔 *Deploys*\n\ndeploy _finished_');
    expect(stack.findBot('D1', 'deploy finished')).toHaveLength(0);

    const conv = await stack.core.db
      .selectFrom('conversations')
      .select('id')
      .where('chat_key', '=', 'D1')
      .executeTakeFirstOrThrow();
    await insertJob(stack.core.db, {
      id: 'slackjb1',
      name: 'digest',
      owner_id: `slack:${ALICE}`,
      report_conversation_id: conv.id,
      prompt: 'digest',
      cron: '0 9 * * *',
      run_at: null,
      timezone: 'UTC',
      next_run_at: Date.now() + 3_600_000,
    });
    const list = ack(await cmd('jobs'));
    expect(visibleText({ text: list.text, blocks: list.blocks })).toContain(
      '*digest* (`slackjb1`) · cron 0 9 * * * (UTC)',
    );
    const buttons = list.blocks
      .filter((b) => b.type === 'actions')
      .flatMap((b) => b.elements.map((e: any) => `${e.action_id}=${e.value}`));
    expect(buttons).toEqual(['sb_job_0=j:slackjb1:p', 'sb_job_1=j:slackjb1:n', 'sb_job_2=j:slackjb1:d']);
    // Bob sees no jobs of his own.
    expect(ack(await cmd('jobs', BOB)).text).toContain('No scheduled jobs');

    const click = (user: string, actionId: string, value: string) =>
      stack.emu.deliver('interactive', blockAction({ user, channel: 'D1', messageTs: '1.000', actionId, value }));
    await click(BOB, 'sb_job_2', 'j:slackjb1:d');
    await waitFor(() => stack.emu.ephemerals.find((e) => e.user === BOB), 'bob told no');
    expect(stack.emu.ephemerals.find((e) => e.user === BOB)?.text).toBe(
      'Only the owner of job slackjb1 or an admin can change it.',
    );
    // A list posted before the value carried the compact action (`sb_job_<op>`, value = job id) still works.
    await click(ALICE, 'sb_job_pause', 'slackjb1');
    await waitFor(
      () => stack.emu.ephemerals.find((e) => e.user === ALICE && e.text.includes('Paused')),
      'alice told paused',
    );
    const row = await stack.core.db
      .selectFrom('jobs')
      .selectAll()
      .where('id', '=', 'slackjb1')
      .executeTakeFirstOrThrow();
    expect(row).toMatchObject({ state: 'paused', next_run_at: null });
  });
});
