import { afterEach, describe, expect, it } from 'vitest';
import { dangerTool, runs, testTools } from '../helpers/test-tools.js';
import {
  alice,
  bob,
  button,
  startTelegramTest,
  type TelegramTest,
  texts,
  waitFor,
  waitForCard,
  waitForText,
} from '../telegram/setup.js';
import { afterTool, jobRows, route, schedulerPassed, schedulesLaterInAnHour } from './helpers.js';

let t: TelegramTest | null = null;
afterEach(async () => {
  await t?.close();
  t = null;
});

const allowScheduling = { approvals: { rules: [{ tool: 'schedule_job', action: 'allow' }] } };
const group = { chatId: -100777, chatType: 'supergroup' as const };

describe('telegram: jobs and notifications', () => {
  it('a job reports to the chat that created it; /jobs lists it and its buttons obey owner rules', async () => {
    t = await startTelegramTest({ overrides: allowScheduling, tools: [...testTools] });
    const tt = t;
    let chatTurn = 0;
    route(
      t.llm,
      (body) => {
        if (afterTool(body)) return { text: 'Scheduled.' };
        chatTurn++;
        return {
          toolCalls: [
            {
              name: 'schedule_job',
              arguments: JSON.stringify({ prompt: 'say hi', cron: '*/2 * * * * *', name: 'greeter' }),
            },
          ],
        };
      },
      () => ({ text: 'Hi **there**' }),
    );
    t.emu.sendText(alice, 'greet me every two seconds');
    await waitForText(t.emu, alice.id, (p) => p === 'Scheduled.', 'confirmation');
    const first = await waitForText(t.emu, alice.id, (p) => p.startsWith('🔔 ⏰ greeter'), 'the first report', 10_000);
    expect(first.plain).toBe('🔔 ⏰ greeter\n\nHi there');
    // A rich message (the default): the title in bold, the model's Markdown as it wrote it.
    expect(first.rich).toBe('🔔 **⏰ greeter**\n\nHi **there**');

    t.emu.sendText(alice, '/jobs');
    const list = await waitForText(t.emu, alice.id, (p) => p.startsWith('Scheduled jobs'), '/jobs');
    const [job] = await jobRows(t.h);
    expect(list.plain).toContain(`greeter (${job?.id}) · cron */2 * * * * * (`);
    const labels = list.reply_markup.inline_keyboard.map((row: Array<{ text: string }>) => row.map((b) => b.text));
    expect(labels).toEqual([['⏸ Pause greeter', '⚡ Run now greeter', '🗑 Delete greeter']]);

    // Bob is allowed to use the bot but does not own the job: refused, nothing changes.
    const cb = t.emu.tap(bob, alice.id, list.message_id, button(list, 'Delete'));
    await waitFor(() => tt.emu.callbackAnswers.find((a) => a.callback_query_id === cb), 'bob refused');
    expect(t.emu.callbackAnswers.find((a) => a.callback_query_id === cb)).toMatchObject({
      show_alert: true,
      text: `Only the owner of job ${job?.id} or an admin can change it.`,
    });
    expect((await jobRows(t.h))[0]?.state).toBe('active');

    t.emu.tap(alice, alice.id, list.message_id, button(list, 'Pause'));
    await waitFor(async () => (await jobRows(tt.h))[0]?.state === 'paused', 'paused');
    await waitFor(() => list.plain.includes('paused'), 'the list edited in place');
    const resume = list.reply_markup.inline_keyboard.flat().map((b: { text: string }) => b.text);
    expect(resume).toContain('▶️ Resume greeter');
    await t.h.core.idle();
    const reports = texts(t.emu, alice.id).filter((m) => m.plain.startsWith('🔔 ⏰ greeter')).length;
    // Past its next occurrence (within two seconds): a job that still ran would have been claimed by now.
    await schedulerPassed(t.h, job?.id as string, Date.now() + 2_100);
    await t.h.core.idle();
    expect(texts(t.emu, alice.id).filter((m) => m.plain.startsWith('🔔 ⏰ greeter'))).toHaveLength(reports);
    expect(chatTurn).toBe(1);
  });

  it('a tapped /jobs list is redrawn through the ledger: a 429 on its edit is retried, the edit lands once', async () => {
    t = await startTelegramTest({ overrides: allowScheduling, tools: [...testTools] });
    const tt = t;
    schedulesLaterInAnHour(t.llm);
    t.emu.sendText(alice, 'remind me in an hour');
    await waitForText(t.emu, alice.id, (p) => p === 'Scheduled.', 'confirmation');
    t.emu.sendText(alice, '/jobs');
    const list = await waitForText(t.emu, alice.id, (p) => p.startsWith('Scheduled jobs'), '/jobs');
    const edits = () =>
      tt.emu.calls.filter((c) => c.method === 'editMessageText' && Number(c.params.message_id) === list.message_id);

    t.emu.fail('editMessageText', 1, { status: 429, retryAfter: 1 });
    const cb = t.emu.tap(alice, alice.id, list.message_id, button(list, 'Pause'));
    await waitFor(() => tt.emu.callbackAnswers.find((a) => a.callback_query_id === cb), 'the tap answered');
    await waitFor(() => list.plain.includes('paused'), 'the list redrawn after the 429');
    expect(edits().map((c) => c.ok)).toEqual([false, true]);
    // The redraw is a row of the ledger, keyed by the tapped message, delivered after its retry.
    const key = `list:telegram:${alice.id}:at:${alice.id}:${list.message_id}`;
    const row = () => tt.h.core.db.selectFrom('deliveries').selectAll().where('idem_key', '=', key).executeTakeFirst();
    await waitFor(async () => (await row())?.status === 'delivered', 'the redraw delivered');
    const first = await row();
    expect(first?.kind).toBe('notice');
    expect(first?.attempts).toBeGreaterThan(0);

    // A second tap gives the same row the list as it stands now: the message is edited once more.
    t.emu.tap(alice, alice.id, list.message_id, button(list, 'Resume'));
    await waitFor(() => !list.plain.includes('paused'), 'the list redrawn after the resume');
    await waitFor(async () => (await row())?.status === 'delivered', 'the second redraw delivered');
    expect((await row())?.version).toBeGreaterThan(first?.version ?? 0);
    expect(edits().filter((c) => c.ok)).toHaveLength(2);
    expect(texts(t.emu, alice.id).filter((m) => m.plain.startsWith('Scheduled jobs'))).toHaveLength(1);
  });

  it('a redraw of a tapped /jobs list that a 429 held back is done by the next start, once', async () => {
    t = await startTelegramTest({ overrides: allowScheduling, tools: [...testTools] });
    const tt = t;
    schedulesLaterInAnHour(t.llm);
    t.emu.sendText(alice, 'remind me in an hour');
    await waitForText(t.emu, alice.id, (p) => p === 'Scheduled.', 'confirmation');
    t.emu.sendText(alice, '/jobs');
    const list = await waitForText(t.emu, alice.id, (p) => p.startsWith('Scheduled jobs'), '/jobs');
    const edits = () =>
      tt.emu.calls.filter((c) => c.method === 'editMessageText' && Number(c.params.message_id) === list.message_id);
    t.emu.fail('editMessageText', 1, { status: 429, retryAfter: 3 });
    t.emu.tap(alice, alice.id, list.message_id, button(list, 'Pause'));
    await waitFor(() => edits().length === 1, 'the rate-limited edit');
    await t.restart();
    await waitFor(() => list.plain.includes('paused'), 'the list redrawn by the next start', 15_000);
    expect(edits().map((c) => c.ok)).toEqual([false, true]);
  });

  it('a job run asks for approval with buttons in the reporting chat; the owner approves', async () => {
    const before = runs.danger ?? 0;
    t = await startTelegramTest({ overrides: allowScheduling, tools: [dangerTool] });
    const at = new Date(Date.now() + 1_000).toISOString();
    route(
      t.llm,
      (body) =>
        afterTool(body)
          ? { text: 'Scheduled.' }
          : {
              toolCalls: [
                { name: 'schedule_job', arguments: JSON.stringify({ prompt: 'clean tmp', at, name: 'cleanup' }) },
              ],
            },
      (body) =>
        afterTool(body) ? { text: 'Cleaned.' } : { toolCalls: [{ name: 'danger', arguments: '{"target":"tmp"}' }] },
    );
    t.emu.sendText(alice, 'clean tmp in a second');
    const card = await waitForCard(t.emu, alice.id, 'the job run approval card');
    expect(card.plain).toContain('[cleanup] danger tmp');
    t.emu.tap(alice, alice.id, card.message_id, button(card, 'Approve'));
    await waitForText(t.emu, alice.id, (p) => p === '🔔 ⏰ cleanup\n\nCleaned.', 'the report');
    expect((runs.danger ?? 0) - before).toBe(1);
  });

  it('notify goes to the home chat set with /sethome', async () => {
    t = await startTelegramTest({ tools: [...testTools] });
    t.llm.push(
      { toolCalls: [{ name: 'notify', arguments: '{"text":"build is green","title":"CI"}' }] },
      { text: 'sent it' },
    );
    t.emu.sendText(alice, '/sethome', group);
    await waitForText(t.emu, group.chatId, (p) => p.includes('receives your notifications'), '/sethome in the group');
    t.emu.sendText(alice, 'tell me when the build is green');
    await waitForText(t.emu, alice.id, (p) => p === 'sent it', 'the reply');
    const note = await waitForText(t.emu, group.chatId, (p) => p.startsWith('🔔'), 'the notification in the home chat');
    expect(note.plain).toBe('🔔 CI\n\nbuild is green');
    expect(texts(t.emu, alice.id).some((m) => m.plain.includes('build is green'))).toBe(false);
  });
});
