import { afterEach, describe, expect, it } from 'vitest';
import { Core } from '../../src/core/core.js';
import { startHarness, waitFor, type Harness } from '../helpers/harness.js';
import { runs, testTools } from '../helpers/test-tools.js';
import { channelKinds } from '../../src/channels/registry.js';

let h: Harness;
let other: Core | null = null;
afterEach(async () => {
  await other?.close();
  await h.close();
});

describe('two cores over one database', () => {
  it('an approval decided by another process resumes the turn in the process that serves the chat', async () => {
    for (const k of Object.keys(runs)) delete runs[k];
    h = await startHarness({ tools: testTools });
    h.llm.push({ toolCalls: [{ name: 'danger', arguments: '{"target":"x"}' }] }, { text: 'resumed elsewhere' });
    await h.send('do it');
    const req = await waitFor(() => h.channel.eventsOf('approval_requested')[0], 'approval');

    // A second core (as `switchboard` in another process would be) with no channel of its own.
    other = await Core.open({ config: h.config, tools: testTools, channelKinds });
    const r = await other.decideApproval({ id: req.id, decision: 'approve', by: 'test:u1' });
    expect(r.ok).toBe(true);
    await waitFor(
      () => h.channel.eventsOf('reply').some((e) => e.text === 'resumed elsewhere'),
      'reply in the serving core',
    );
    await h.core.idle();
    expect(runs.danger).toBe(1);
    // The deciding core never ran the conversation: it has no channel for it.
    expect(h.llm.chatRequests()).toHaveLength(2);
  });
});
