import { writeFileSync } from 'node:fs';
import path from 'node:path';
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
    expect(t.screen()).toContain('(approval approved session by console:local)');
    // The reply is shown before the turn is marked done; ask for the status once it is.
    await h.core.idle();
    t.input.write('/status\n');
    await waitFor(() => t.screen().includes('Model: test-model\nTurn: idle'), 'status line');
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
      channels: () => [
        new ConsoleChannel({ conversation: 'brand-new-one', input: second.input, output: second.output }),
      ],
    });
    h.llm.push({ text: 'Yes to what?' });
    second.input.write('y\n');
    await waitFor(() => second.screen().includes('Yes to what?'), 'reply in the new conversation');
    expect(second.screen()).not.toContain('Approve danger');
    expect(runs.danger).toBeUndefined();
    await h.core.idle();
    second.input.write('/status\n');
    await waitFor(() => second.screen().includes('Turn: idle'), 'status');
    expect(second.screen()).toContain('Waiting in other conversations: c4 (open with --conversation NAME)');
    const c4 = await h.core.findConversation({ channel: 'console', chatKey: 'c4' });
    expect((await h.core.status({ channel: 'console', chatKey: 'c4' })).pendingApprovals).toBe(1);
    expect(c4).toBeDefined();
    await h.close();
    h = owner;
  });
});

describe('console prompts and commands', () => {
  const open = async () => {
    const t = terminal();
    h = await startHarness({
      tools: testTools,
      channels: () => [new ConsoleChannel({ conversation: 'term', input: t.input, output: t.output })],
    });
    return t;
  };

  it('commands work at the approval prompt; /stop cancels with one line', async () => {
    for (const k of Object.keys(runs)) delete runs[k];
    const t = await open();
    h.llm.push({ toolCalls: [{ name: 'danger', arguments: '{"target":"x"}' }] });
    t.input.write('do it\n');
    await waitFor(() => t.screen().includes('[y] once'), 'approval prompt');
    expect(t.screen()).toContain('[a] always (danger on x; your turns, every conversation)');
    t.input.write('/status\n');
    await waitFor(() => t.screen().includes('Turn: waiting\nPending approvals: 1'), 'status at the approval prompt');
    expect(t.screen()).not.toContain('Please answer y');
    const mark = t.screen().length;
    t.input.write('/stop\n');
    await waitFor(() => t.screen().includes('(stopped)'), 'stopped');
    await h.core.idle();
    expect(t.screen().slice(mark)).toBe('(stopped)\n');
    expect(runs.danger).toBeUndefined();
    t.input.write('/stop\n');
    await waitFor(() => t.screen().includes('Nothing is running.'), 'nothing to stop');
  });

  it('Enter at the note prompt means no note; the next line is a message, not the note', async () => {
    const t = await open();
    h.llm.push({ toolCalls: [{ name: 'danger', arguments: '{"target":"x"}' }] }, { text: 'Fine.' });
    t.input.write('do it\n');
    await waitFor(() => t.screen().includes('[y] once'), 'approval prompt');
    t.input.write('n\n');
    await waitFor(() => t.screen().includes('Note for the model (Enter for none)'), 'note prompt');
    t.input.write('\n');
    await waitFor(() => t.screen().includes('Fine.'), 'reply');
    const last = h.llm.chatRequests()[1]?.body.messages.at(-1);
    expect(last.content).toBe('The user denied this tool call. Do not retry it unchanged; ask or try another way.');
  });

  it('/model shows and sets the model; /rules lists and revokes an "always" grant', async () => {
    const t = await open();
    t.input.write('/model\n');
    await waitFor(() => t.screen().includes('Model: test-model\nSet with /model NAME'), 'model shown');
    h.llm.models = ['test-model', 'other-model'];
    t.input.write('/model other-model\n');
    await waitFor(() => t.screen().includes('Model set to other-model.'), 'model set');
    t.input.write('/model gpt-nope\n');
    await waitFor(() => t.screen().includes('"gpt-nope" is not listed by'), 'an unlisted model refused');
    t.input.write('/model\n');
    await waitFor(() => t.screen().includes('Model: other-model\nSet with /model NAME'), 'the model unchanged');
    t.input.write('/model default\n');
    await waitFor(() => t.screen().includes('Model set to test-model.'), 'model reset');

    h.llm.push({ toolCalls: [{ name: 'danger', arguments: '{"target":"x"}' }] }, { text: 'Done.' });
    t.input.write('do it\n');
    await waitFor(() => t.screen().includes('[y] once'), 'approval prompt');
    t.input.write('a\n');
    await waitFor(() => t.screen().includes('Done.'), 'reply');
    t.input.write('/rules\n');
    await waitFor(
      // A table is a code block: indented under the header, as the terminal shows code.
      () => /\n {2}1 {2}danger {2}x {2}allow {2}user console:local {2}console:local {2}\d{4}-/.test(t.screen()),
      'rule listed',
    );
    t.input.write('/rules revoke 1\n');
    await waitFor(() => t.screen().includes('Revoked rule 1  danger'), 'revoked');
    t.input.write('/rules\n');
    await waitFor(() => t.screen().includes('No stored rules.'), 'no rules');
  });

  it('/quit while a tool runs says it is waiting; a second /quit stops the turn and leaves', async () => {
    for (const k of Object.keys(runs)) delete runs[k];
    const t = terminal();
    let ended = 0;
    h = await startHarness({
      tools: testTools,
      channels: () => [
        new ConsoleChannel({ conversation: 'term', input: t.input, output: t.output, onEnd: () => ended++ }),
      ],
    });
    h.llm.push({ toolCalls: [{ name: 'sleep', arguments: '{}' }] }, { text: 'never' });
    t.input.write('sleep\n');
    await waitFor(() => runs.sleep === 1, 'sleep running');
    t.input.write('/quit\n');
    await waitFor(() => t.screen().includes('waiting for the running turn'), 'waiting line');
    expect(ended).toBe(1);
    t.input.write('/quit\n');
    await waitFor(() => t.screen().includes('(stopped; leaving)'), 'forced');
    await h.core.idle();
    expect((await h.core.status({ channel: 'console', chatKey: 'term' })).turn).toBe('idle');
    expect(ended).toBe(2);
  });
});

describe('console line editing', () => {
  it('arrow keys edit the line and recall history; escape sequences never reach the model', async () => {
    const t = terminal();
    h = await startHarness({
      tools: testTools,
      channels: () => [new ConsoleChannel({ conversation: 'term', input: t.input, output: t.output, terminal: true })],
    });
    h.llm.push({ text: 'one' }, { text: 'two' });
    // One key per chunk, as a terminal delivers them.
    const type = async (keys: string[]) => {
      for (const k of keys) {
        t.input.write(k);
        await new Promise((r) => setTimeout(r, 5));
      }
    };
    await type(['h', 'e', 'l', 'l', 'o', '\x1b[D', '\x1b[D', 'X', '\r']);
    await waitFor(() => h.llm.chatRequests().length === 1, 'first request');
    await h.core.idle();
    await type(['\x1b[A', '\r']); // up arrow: the previous line again
    await waitFor(() => h.llm.chatRequests().length === 2, 'second request');
    await h.core.idle();
    const users = h.llm
      .chatRequests()[1]
      ?.body.messages.filter((m: any) => m.role === 'user')
      .map((m: any) => m.content);
    expect(users).toEqual(['helXlo', 'helXlo']);
    expect(t.screen()).toContain('› ');
  });
});

describe('send_attachment in the console', () => {
  it('reports the real size of a small file', async () => {
    const t = terminal();
    h = await startHarness({
      channels: () => [new ConsoleChannel({ conversation: 'term', input: t.input, output: t.output })],
    });
    writeFileSync(path.join(h.dir, 'workspace', 'hello.txt'), 'hi there\n');
    h.llm.push({ toolCalls: [{ name: 'send_attachment', arguments: '{"path":"hello.txt"}' }] }, { text: 'Sent.' });
    t.input.write('send me hello.txt\n');
    await waitFor(() => t.screen().includes('Sent.'), 'reply');
    const tool = h.llm.chatRequests()[1]?.body.messages.find((m: any) => m.role === 'tool');
    expect(tool.content).toBe('Sent hello.txt (9 B) as a document.');
    expect(t.screen()).toContain('📎');
  });
});
