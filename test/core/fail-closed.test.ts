import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { startHarness, waitFor, type Harness } from '../helpers/harness.js';
import { runs, testTools } from '../helpers/test-tools.js';

let h: Harness;
afterEach(async () => {
  await h.close();
});

describe('approval rules that cannot be read', () => {
  it('fail closed: no tool is offered or run, and the turn still ends cleanly', async () => {
    for (const k of Object.keys(runs)) delete runs[k];
    h = await startHarness({ tools: testTools });
    await sql`ALTER TABLE approval_rules RENAME TO approval_rules_broken`.execute(h.core.db);
    h.llm.push({ toolCalls: [{ name: 'echo', arguments: '{"text":"x"}' }] }, { text: 'could not' });
    await h.send('try');
    await waitFor(() => h.channel.eventsOf('turn_done').length === 1, 'turn_done');
    const offered = h.llm.chatRequests()[0]?.body.tools.map((t: any) => t.function.name);
    expect(offered).toEqual(['ask_user_clarification']);
    expect(runs.echo).toBeUndefined();
    const tool = h.llm.chatRequests()[1]?.body.messages.find((m: any) => m.role === 'tool');
    expect(tool.content).toMatch(/approval rules could not be read/);
    await sql`ALTER TABLE approval_rules_broken RENAME TO approval_rules`.execute(h.core.db);
  });
});
