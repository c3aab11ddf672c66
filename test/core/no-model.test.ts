/**
 * With no model configured (no key for OpenAI's endpoint, the default), a chat's first message is
 * answered with what to set, not with a network error of a request sent with a made-up key; a
 * keyless local endpoint gets its requests without any Authorization header.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { MODEL_NOT_CONFIGURED } from '../../src/delivery/notices.js';
import { startHarness, waitFor, type Harness } from '../helpers/harness.js';
import { testTools } from '../helpers/test-tools.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const turnDone = (harness: Harness) =>
  waitFor(() => harness.channel.eventsOf('turn_done')[0], 'the turn to end', 20_000);

describe('no model configured', () => {
  it('the first message is answered with what to set (key, local base URL, or the demo), and the turn fails', async () => {
    // No base URL (OpenAI's endpoint, the default) and no key.
    h = await startHarness({ tools: testTools, overrides: { llm: { base_url: undefined, api_key: '' } } });
    await h.send('hello?');
    expect((await turnDone(h)).status).toBe('failed');
    const [error] = h.channel.eventsOf('error');
    expect(error?.message).toBe(MODEL_NOT_CONFIGURED);
    for (const words of ['OPENAI_API_KEY', 'OPENAI_BASE_URL', '--demo']) expect(error?.message).toContain(words);
    // The chat's own line (a notice row) says the same.
    const rows = await h.core.db.selectFrom('deliveries').select('content').execute();
    expect(rows.map((r) => JSON.parse(r.content ?? '{}').text)).toContain(MODEL_NOT_CONFIGURED);
  });

  it('OpenAI named explicitly without a key is the same: nothing is sent', async () => {
    h = await startHarness({
      tools: testTools,
      overrides: { llm: { base_url: 'https://api.openai.com/v1', api_key: '', max_retries: 0 } },
    });
    await h.send('hello?');
    await turnDone(h);
    // A request would have failed on DNS or been refused (HTTP 401): neither is what the chat says.
    expect(h.channel.eventsOf('error')[0]?.message).toBe(MODEL_NOT_CONFIGURED);
  });

  it('a local endpoint without a key gets no Authorization header at all', async () => {
    h = await startHarness({ tools: testTools, overrides: { llm: { api_key: '' } } });
    h.llm.push({ text: 'local answer' });
    await h.send('hi');
    expect((await turnDone(h)).status).toBe('done');
    const [request] = h.llm.chatRequests();
    expect(request?.headers.authorization).toBeUndefined();
  });
});
