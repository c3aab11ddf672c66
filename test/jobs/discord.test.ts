import { afterEach, describe, expect, it } from 'vitest';
import { testTools } from '../helpers/test-tools.js';
import { alice, button, type DiscordStack, startDiscordStack, waitFor, waitForMessage } from '../discord/stack.js';
import { jobRows, schedulesLaterInAnHour } from './helpers.js';

let s: DiscordStack | null = null;
afterEach(async () => {
  await s?.close();
  s = null;
});

const allowScheduling = { approvals: { rules: [{ tool: 'schedule_job', action: 'allow' }] } };

describe('discord: the /jobs list', () => {
  it('a tapped list said in the chat is redrawn through the ledger, once, after a 429 on its edit', async () => {
    s = await startDiscordStack({ overrides: allowScheduling, tools: [...testTools] });
    const st = s;
    schedulesLaterInAnHour(s.llm);
    const dm = s.emu.dmChannel(alice).id;
    s.emu.dm(alice, 'remind me in an hour');
    await waitForMessage(s.emu, dm, (c) => c === 'Scheduled.', 'confirmation');
    s.emu.dm(alice, '/jobs');
    const list = await waitForMessage(s.emu, dm, (c) => c.includes('Scheduled jobs'), '/jobs');
    const edit = `PATCH /channels/${dm}/messages/${list.id}`;

    s.emu.rateLimitNext('PATCH', new RegExp(`/channels/${dm}/messages/${list.id}$`), 0.2);
    s.emu.click(alice, list.id, button(list, 'Pause'));
    await waitFor(async () => (await jobRows(st.h))[0]?.state === 'paused', 'paused');
    await waitFor(() => list.content.includes('paused'), 'the list redrawn after the 429');
    expect(list.edits).toBe(1);
    expect(s.emu.requests.filter((r) => r.startsWith(edit))).toHaveLength(2);
    expect(button(list, 'Resume')).toBeTruthy();
    // The redraw is a row of the ledger, keyed by the tapped message.
    const key = `list:discord:${alice.id}:at:${list.id}`;
    const row = () => st.h.core.db.selectFrom('deliveries').selectAll().where('idem_key', '=', key).executeTakeFirst();
    await waitFor(async () => (await row())?.status === 'delivered', 'the redraw delivered');
    expect((await row())?.kind).toBe('notice');
    // The tapper is told what happened; the list itself is not posted again.
    expect(s.emu.botMessages(dm).filter((m) => m.content.includes('Scheduled jobs'))).toHaveLength(1);
  });

  it('a list shown to its caller alone (the slash command) is not the ledger’s: the action runs, nothing is edited', async () => {
    s = await startDiscordStack({ overrides: allowScheduling, tools: [...testTools] });
    const st = s;
    schedulesLaterInAnHour(s.llm);
    const dm = s.emu.dmChannel(alice).id;
    s.emu.dm(alice, 'remind me in an hour');
    await waitForMessage(s.emu, dm, (c) => c === 'Scheduled.', 'confirmation');
    const slash = s.emu.slash(alice, dm, 'jobs');
    const list = await waitFor(() => slash.original, 'the ephemeral list');
    expect(list.flags).toBe(64);
    s.emu.click(alice, list.id, button(list, 'Pause'));
    await waitFor(async () => (await jobRows(st.h))[0]?.state === 'paused', 'paused');
    await st.h.core.idle();
    const rows = await s.h.core.db.selectFrom('deliveries').select('idem_key').execute();
    expect(rows.filter((r) => r.idem_key.startsWith('list:'))).toEqual([]);
    expect(s.emu.requests.filter((r) => r.includes(`/messages/${list.id}`))).toEqual([]);
    expect(list.edits).toBe(0);
  });
});
