import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { ConsoleChannel } from '../../src/channels/console/index.js';
import { startHarness, waitFor, type Harness } from '../helpers/harness.js';
import { runs, testTools } from '../helpers/test-tools.js';

let h: Harness;
afterEach(async () => {
  await h.close();
});

function terminal() {
  const input = new PassThrough();
  const output = new PassThrough();
  let text = '';
  output.on('data', (c) => {
    text += c.toString();
  });
  return { input, output, screen: () => text };
}

describe('console chat', () => {
  it('streams the reply and turns an approval into a prompt (s = this session)', async () => {
    for (const k of Object.keys(runs)) delete runs[k];
    const t = terminal();
    h = await startHarness({
      tools: testTools,
      channels: () => [new ConsoleChannel({ conversation: 'term', input: t.input, output: t.output })],
    });
    h.llm.push({ toolCalls: [{ name: 'danger', arguments: '{"target":"x"}' }] }, { text: 'All done here.' });
    t.input.write('please do it\n');
    await waitFor(() => t.screen().includes('[y] once'), 'approval prompt');
    expect(t.screen()).toContain('Approve danger x?');
    t.input.write('maybe\n');
    await waitFor(() => t.screen().includes('Please answer y'), 'reprompt');
    t.input.write('s\n');
    await waitFor(() => t.screen().includes('All done here.'), 'reply');
    expect(runs.danger).toBe(1);
    expect(t.screen()).toContain('(approval approved by console:local)');
    t.input.write('/status\n');
    await waitFor(() => t.screen().includes('model test-model · turn idle'), 'status line');
  });

  it('deny asks for a note that reaches the model', async () => {
    const t = terminal();
    h = await startHarness({
      tools: testTools,
      channels: () => [new ConsoleChannel({ conversation: 'term', input: t.input, output: t.output })],
    });
    h.llm.push({ toolCalls: [{ name: 'danger', arguments: '{"target":"x"}' }] }, { text: 'Fine.' });
    t.input.write('do it\n');
    await waitFor(() => t.screen().includes('[y] once'), 'approval prompt');
    t.input.write('n\n');
    await waitFor(() => t.screen().includes('Note for the model'), 'note prompt');
    t.input.write('wrong file\n');
    await waitFor(() => t.screen().includes('Fine.'), 'reply');
    const last = h.llm.chatRequests()[1]?.body.messages.at(-1);
    expect(last.content).toBe('The user denied this tool call. Their note: wrong file');
  });
});

describe('console sessions see only their own conversation', () => {
  it('a pending approval of another console conversation is neither shown nor answered by the first line typed', async () => {
    for (const k of Object.keys(runs)) delete runs[k];
    const first = terminal();
    h = await startHarness({
      tools: testTools,
      channels: () => [new ConsoleChannel({ conversation: 'c4', input: first.input, output: first.output })],
    });
    h.llm.push({ toolCalls: [{ name: 'danger', arguments: '{"target":"c4"}' }] });
    first.input.write('do the dangerous thing\n');
    await waitFor(() => first.screen().includes('[y] once'), 'approval prompt in c4');
    await h.core.close();
    const owner = h; // owns the temp dir and the model server; closed last by afterEach

    // Same database, a session on a brand-new conversation: "y" is a message, not an approval.
    const second = terminal();
    h = await startHarness({
      dir: h.dir,
      llm: h.llm,
      tools: testTools,
      channels: () => [new ConsoleChannel({ conversation: 'brand-new-one', input: second.input, output: second.output })],
    });
    h.llm.push({ text: 'Yes to what?' });
    second.input.write('y\n');
    await waitFor(() => second.screen().includes('Yes to what?'), 'reply in the new conversation');
    expect(second.screen()).not.toContain('Approve danger');
    expect(runs.danger).toBeUndefined();
    const c4 = await h.core.findConversation({ channel: 'console', chatKey: 'c4' });
    expect((await h.core.status({ channel: 'console', chatKey: 'c4' })).pendingApprovals).toBe(1);
    expect(c4).toBeDefined();
    await h.close();
    h = owner;
  });
});
