/** The per-user rate limit on Slack: a flood gets one notice, and dropped messages never reach the model. */
import { afterEach, describe, expect, it } from 'vitest';
import { ALICE, type SlackStack, startSlackStack, waitFor } from './stack.js';

let stack: SlackStack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

describe('Slack: rate limit', () => {
  it('answers a flood of DMs with one notice, and the dropped messages stay away from the model', async () => {
    stack = await startSlackStack('http', { overrides: { access: { rate_limit_per_minute: 2 } } });
    const s = stack;
    s.llm.setHandler(() => ({ text: 'ok' }));
    for (let i = 0; i < 6; i++) {
      const res = await s.sendEvent(s.emu.userMessage({ channel: 'D1', user: ALICE, text: `msg ${i}` }));
      expect(res.status).toBe(200);
    }
    await waitFor(() => s.findBot('D1', 'too fast').length, 'the rate-limit notice');
    await s.quiesce();
    const notices = s.findBot('D1', 'too fast');
    expect(notices).toHaveLength(1);
    expect(notices[0]?.text).toMatch(/this one and any you send in the next ([1-9]|[1-5]\d|60) s are dropped/);
    const seen = new Set(
      s.llm
        .chatRequests()
        .flatMap((r) =>
          (r.body.messages as Array<{ role: string; content: string }>)
            .filter((m) => m.role === 'user')
            .map((m) => m.content),
        ),
    );
    expect([...seen].sort()).toEqual(['msg 0', 'msg 1']);
  });
});
