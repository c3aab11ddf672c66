import { afterEach, describe, expect, it } from 'vitest';
import { insertJob } from '../../src/store/repos/jobs.js';
import { startHarness, waitFor, type Harness } from '../helpers/harness.js';
import { dangerTool, runs } from '../helpers/test-tools.js';
import { afterTool, jobRows, jobsOf, lastUser, route, runRows, schedulerPassed } from './helpers.js';

let h: Harness;
afterEach(async () => {
  await h?.close();
});

const allowJobTools = {
  approvals: {
    rules: [
      { tool: 'schedule_job', action: 'allow' },
      { tool: 'cancel_job', action: 'allow' },
    ],
  },
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The stored result of a tool call: written with the round's other results, after `tool_finished`. */
function toolMessage(h: Harness, callId: string) {
  return waitFor(
    () =>
      h.core.db
        .selectFrom('messages')
        .select('content')
        .where('role', '=', 'tool')
        .where('tool_call_id', '=', callId)
        .executeTakeFirst(),
    'the stored tool result',
  );
}

function notificationsTo(h: Harness, conversationId: string) {
  return h.channel.eventsOf('notification', conversationId);
}

describe('scheduled jobs (core, recording channel, scripted model)', () => {
  it('a one-off job fires on time and its answer reaches the creating chat once', async () => {
    h = await startHarness({ overrides: allowJobTools });
    // Far enough ahead that the row is still `active` when read after the confirmation (two model
    // round trips and a tool call; slower on a loaded machine or over PostgreSQL).
    const at = new Date(Date.now() + 3_000).toISOString();
    route(
      h.llm,
      (body) =>
        afterTool(body)
          ? { text: 'Reminder set.' }
          : {
              toolCalls: [
                {
                  name: 'schedule_job',
                  arguments: JSON.stringify({ prompt: 'Remind me to call Ana', at, name: 'call Ana' }),
                },
              ],
            },
      () => ({ text: 'Time to **call Ana**!' }),
    );
    const sent = await h.send('in a moment remind me to call Ana');
    const conv = (sent as { conversationId: string }).conversationId;
    await waitFor(() => h.channel.eventsOf('reply', conv).some((e) => e.text === 'Reminder set.'), 'the confirmation');
    const [job] = await jobRows(h);
    expect(job).toMatchObject({
      name: 'call Ana',
      owner_id: 'test:u1',
      report_conversation_id: conv,
      state: 'active',
      next_run_at: Date.parse(at),
    });

    const note = await waitFor(() => notificationsTo(h, conv)[0], 'the job output', 8_000);
    expect(note).toMatchObject({ title: '⏰ call Ana', text: 'Time to **call Ana**!', source: `job:${job?.id}` });
    const fired = h.events.find((e) => e.conversationId === `job:${job?.id}` && e.event.type === 'turn_started');
    expect(fired).toBeDefined();
    await sleep(300);
    await h.core.idle();
    expect(notificationsTo(h, conv)).toHaveLength(1);
    expect(await runRows(h, job?.id)).toMatchObject([{ status: 'done', trigger: 'schedule' }]);
    expect((await jobRows(h))[0]).toMatchObject({ state: 'finished', next_run_at: null, last_outcome: 'done' });
    const metrics = await h.core.metrics.registry.metrics();
    expect(metrics).toContain('switchboard_job_occurrences_total{outcome="started"} 1');
    expect(metrics).toContain('switchboard_job_occurrences_total{outcome="done"} 1');
    expect(metrics).toContain('switchboard_job_runs_running 0');
    // The run ran as the owner, in its own conversation, with the prompt after a header.
    const runPrompt = h.llm
      .chatRequests()
      .map((r) => lastUser(r.body))
      .find((t) => t.includes('Remind me to call Ana'));
    expect(runPrompt).toMatch(/^\[Scheduled job “call Ana” \(\w{8}\), run for .*\]\n\nRemind me to call Ana$/);
  });

  it('a recurring 6-field cron job fires repeatedly, shows in list_jobs, and stops after cancel_job', async () => {
    h = await startHarness({ overrides: allowJobTools });
    let chatStep = 0;
    let jobId = '';
    route(
      h.llm,
      (body) => {
        if (afterTool(body)) return { text: 'done' };
        chatStep++;
        if (chatStep === 1)
          return {
            toolCalls: [
              {
                name: 'schedule_job',
                arguments: JSON.stringify({ prompt: 'tick', cron: '*/1 * * * * *', name: 'ticker' }),
              },
            ],
          };
        if (chatStep === 2) return { toolCalls: [{ name: 'list_jobs', arguments: '{}' }] };
        return { toolCalls: [{ name: 'cancel_job', arguments: JSON.stringify({ id: jobId }) }] };
      },
      () => ({ text: 'tock' }),
    );
    const conv = ((await h.send('tick every second')) as { conversationId: string }).conversationId;
    jobId = (await waitFor(async () => (await jobRows(h))[0]?.id, 'the job row')) as string;
    // Every second (a step, as in */2): two runs take 1–2 s of waiting, not the 2–4 s of */2.
    await waitFor(() => notificationsTo(h, conv).length >= 2, 'two runs', 10_000);

    await h.send('what jobs do I have?');
    const listCall = await waitFor(
      () => h.channel.eventsOf('tool_finished', conv).find((e) => e.name === 'list_jobs'),
      'list_jobs',
    );
    const listed = await toolMessage(h, listCall.callId);
    expect(listed?.content).toContain(`**ticker** (\`${jobId}\`) · cron */1 * * * * *`);
    expect(listed?.content).toContain('last: ');

    await h.send('cancel it');
    await waitFor(async () => (await jobRows(h))[0]?.state === 'deleted', 'the job deleted');
    await h.core.idle();
    const ticks = () => notificationsTo(h, conv).filter((n) => n.source === `job:${jobId}`);
    const count = ticks().length;
    // Past its next occurrence (within a second): a job that still ran would have been claimed by now.
    await schedulerPassed(h, jobId, Date.now() + 1_100);
    await h.core.idle();
    expect(ticks()).toHaveLength(count);
    const done = (await runRows(h, jobId)).filter((r) => r.status === 'done');
    expect(done.length).toBeGreaterThanOrEqual(2);
    expect(done.length).toBe(count);
  });

  it('schedule_job asks for approval by default; a bad expression is a clear tool error and stores nothing', async () => {
    h = await startHarness();
    route(
      h.llm,
      (body) =>
        afterTool(body)
          ? { text: 'ok' }
          : { toolCalls: [{ name: 'schedule_job', arguments: JSON.stringify({ prompt: 'x', cron: '99 * * * *' }) }] },
      () => ({ text: 'never' }),
    );
    const conv = ((await h.send('schedule')) as { conversationId: string }).conversationId;
    const card = await waitFor(() => h.channel.eventsOf('approval_requested', conv)[0], 'the approval card');
    expect(card.tool).toBe('schedule_job');
    await h.core.decideApproval({ id: card.id, decision: 'approve', by: 'test:u1' });
    const fin = await waitFor(
      () => h.channel.eventsOf('tool_finished', conv).find((e) => e.name === 'schedule_job'),
      'the tool result',
    );
    expect(fin.status).toBe('failed');
    const result = await toolMessage(h, fin.callId);
    expect(result?.content).toMatch(
      /^Error: bad cron expression "99 \* \* \* \*": Invalid value for minute: 99.*Nothing was scheduled\.$/,
    );
    expect(await jobRows(h)).toEqual([]);
  });

  it('runs of one job never overlap: a due occurrence while a run is going is skipped and recorded', async () => {
    h = await startHarness({ overrides: allowJobTools });
    route(
      h.llm,
      () => ({ text: 'n/a' }),
      () => ({ text: 'slow', chunkSize: 1, delayMs: 350 }),
    );
    const conv = ((await h.send('hi')) as { conversationId: string }).conversationId;
    await h.core.idle();
    const job = await insertJob(h.core.db, {
      id: 'overlap1',
      name: 'slow',
      owner_id: 'test:u1',
      report_conversation_id: conv,
      prompt: 'be slow',
      cron: '* * * * * *',
      run_at: null,
      timezone: 'UTC',
      next_run_at: Math.ceil(Date.now() / 1000) * 1000 + 1000,
    });
    jobsOf(h.core).wake();
    // A run takes ~1.4 s against a schedule of every second: wait for two finished runs with a
    // skipped occurrence between them, so the overlap check below has runs to compare.
    await waitFor(
      async () => {
        const sofar = await runRows(h, job.id);
        return (
          sofar.some((r) => r.status === 'skipped') &&
          sofar.filter((r) => r.status !== 'skipped' && r.finished_at !== null).length >= 2
        );
      },
      'two finished runs and a skipped occurrence',
      15_000,
    );
    await jobsOf(h.core).act(job.id, 'delete', 'test:u1');
    await h.core.idle();
    const rows = await runRows(h, job.id);
    const skipped = rows.filter((r) => r.status === 'skipped');
    expect(skipped[0]?.detail).toBe('the previous run was still going');
    // Never two runs at once: every run finished before the next one started.
    const ran = rows.filter((r) => r.status !== 'skipped').sort((a, b) => Number(a.started_at) - Number(b.started_at));
    expect(ran.length).toBeGreaterThanOrEqual(2);
    for (let i = 1; i < ran.length; i++)
      expect(Number(ran[i]?.started_at)).toBeGreaterThanOrEqual(Number(ran[i - 1]?.finished_at));
    const row = (await jobRows(h)).find((j) => j.id === job.id);
    expect(row?.skipped_runs).toBe(skipped.length);
  });

  it('a job run that needs approval shows the card in the reporting chat; approving runs the tool', async () => {
    for (const k of Object.keys(runs)) delete runs[k];
    h = await startHarness({ overrides: allowJobTools, tools: [dangerTool] });
    route(
      h.llm,
      () => ({ text: 'n/a' }),
      (body) =>
        afterTool(body) ? { text: 'cleaned up' } : { toolCalls: [{ name: 'danger', arguments: '{"target":"tmp"}' }] },
    );
    const conv = ((await h.send('hi')) as { conversationId: string }).conversationId;
    await h.core.idle();
    await insertJob(h.core.db, {
      id: 'approve1',
      name: 'cleanup',
      owner_id: 'test:u1',
      report_conversation_id: conv,
      prompt: 'clean',
      cron: null,
      run_at: Date.now(),
      timezone: 'UTC',
      next_run_at: Date.now(),
    });
    jobsOf(h.core).wake();
    const card = await waitFor(
      () => h.channel.eventsOf('approval_requested', conv)[0],
      'the card in the reporting chat',
    );
    expect(card).toMatchObject({ tool: 'danger', label: '[cleanup] danger tmp', requester: 'test:u1' });
    // Someone else may not decide; the owner may.
    expect(await h.core.decideApproval({ id: card.id, decision: 'approve', by: 'test:u2' })).toMatchObject({
      ok: false,
      reason: 'not_allowed',
    });
    expect(await h.core.decideApproval({ id: card.id, decision: 'approve', by: 'test:u1' })).toMatchObject({
      ok: true,
    });
    const note = await waitFor(() => notificationsTo(h, conv)[0], 'the report');
    expect(note.text).toBe('cleaned up');
    expect(runs.danger).toBe(1);
    expect(h.channel.eventsOf('approval_resolved', conv)[0]).toMatchObject({
      decision: 'approved',
      label: '[cleanup] danger tmp',
    });
  });

  it('an approval nobody decides times out: the run is stopped, marked and the owner told', async () => {
    for (const k of Object.keys(runs)) delete runs[k];
    h = await startHarness({
      overrides: { ...allowJobTools, jobs: { approval_timeout_seconds: 1 } },
      tools: [dangerTool],
    });
    route(
      h.llm,
      () => ({ text: 'n/a' }),
      (body) =>
        afterTool(body) ? { text: 'gave up' } : { toolCalls: [{ name: 'danger', arguments: '{"target":"tmp"}' }] },
    );
    const conv = ((await h.send('hi')) as { conversationId: string }).conversationId;
    await h.core.idle();
    await insertJob(h.core.db, {
      id: 'timeout1',
      name: 'cleanup',
      owner_id: 'test:u1',
      report_conversation_id: conv,
      prompt: 'clean',
      cron: null,
      run_at: Date.now(),
      timezone: 'UTC',
      next_run_at: Date.now(),
    });
    jobsOf(h.core).wake();
    await waitFor(() => h.channel.eventsOf('approval_requested', conv)[0], 'the card');
    const note = await waitFor(() => notificationsTo(h, conv)[0], 'the timeout message', 8_000);
    expect(note.text).toBe('⌛ no answer to the approval of danger tmp within 1 s; the run was stopped.');
    expect(runs.danger).toBeUndefined();
    expect(await runRows(h, 'timeout1')).toMatchObject([{ status: 'timed_out' }]);
    expect(h.channel.eventsOf('approval_resolved', conv)[0]).toMatchObject({ decision: 'expired' });
  });
});

describe('questions and notify from job runs', () => {
  it('a question nobody answers times out like an approval; notify from a run names the job', async () => {
    h = await startHarness({ overrides: { jobs: { approval_timeout_seconds: 1 } } });
    route(
      h.llm,
      () => ({ text: 'n/a' }),
      (body) => {
        if (afterTool(body) && JSON.stringify(body.messages.at(-1)).includes('Notification sent')) {
          return {
            toolCalls: [
              {
                name: 'ask_user_clarification',
                arguments: '{"question":"Which server?","suggested_answers":["a","b"]}',
              },
            ],
          };
        }
        if (afterTool(body)) return { text: 'never reached' };
        return { toolCalls: [{ name: 'notify', arguments: '{"text":"starting the check","title":"progress"}' }] };
      },
    );
    const conv = ((await h.send('hi')) as { conversationId: string }).conversationId;
    await h.core.idle();
    await insertJob(h.core.db, {
      id: 'question',
      name: 'server check',
      owner_id: 'test:u1',
      report_conversation_id: conv,
      prompt: 'check',
      cron: null,
      run_at: Date.now(),
      timezone: 'UTC',
      next_run_at: Date.now(),
    });
    jobsOf(h.core).wake();
    const progress = await waitFor(() => notificationsTo(h, conv)[0], 'the notify from the run');
    expect(progress).toMatchObject({
      title: '⏰ server check — progress',
      text: 'starting the check',
      source: 'job:question',
    });
    const q = await waitFor(() => h.channel.eventsOf('question', conv)[0], 'the question in the reporting chat');
    expect(q).toMatchObject({ question: '[server check] Which server?', suggestedAnswers: ['a', 'b'] });
    const report = await waitFor(() => notificationsTo(h, conv)[1], 'the timeout report', 8_000);
    expect(report.text).toBe('⌛ no answer to the question “Which server?” within 1 s; the run was stopped.');
    expect(await runRows(h, 'question')).toMatchObject([{ status: 'timed_out' }]);
    expect(h.channel.eventsOf('question_resolved', conv)[0]).toMatchObject({ status: 'cancelled' });
  });
});
