/**
 * The terminal chat shows Markdown as a terminal can: bold and code as ANSI styles on a terminal,
 * plain text elsewhere, never raw `**` or backticks; a streamed reply is printed a block at a time,
 * rendered; control characters from the model never reach the terminal. Inside `switchboard start`
 * its /quit says what else it stops.
 */
import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { ConsoleChannel } from '../../src/channels/console/index.js';
import { MarkdownStream, terminalMarkdown } from '../../src/channels/console/markdown.js';
import { startHarness, waitFor, type Harness } from '../helpers/harness.js';
import { testTools } from '../helpers/test-tools.js';

const BOLD = (s: string) => `\x1b[1m${s}\x1b[22m`;
const CODE = (s: string) => `\x1b[36m${s}\x1b[39m`;

const REPLY = [
  '## Result',
  '',
  '**Done**: wrote `notes/a.txt` — see [the docs](https://example.org/docs).',
  '',
  '- one',
  '- two',
  '',
  '```sh',
  'cat notes/a.txt',
  '```',
  '',
  '| a | b |',
  '|---|---|',
  '| 1 | 22 |',
].join('\n');

describe('Markdown for the terminal', () => {
  it('plain where there is no terminal: no marks left', () => {
    expect(terminalMarkdown(REPLY, false)).toBe(
      [
        'Result',
        '',
        'Done: wrote notes/a.txt — see the docs (https://example.org/docs).',
        '',
        '• one',
        '• two',
        '',
        '  cat notes/a.txt',
        '',
        'a | b',
        '--+---',
        '1 | 22',
      ].join('\n'),
    );
  });

  it('ANSI styles on a terminal', () => {
    const out = terminalMarkdown('**Status** of `x`', true);
    expect(out).toBe(`${BOLD('Status')} of ${CODE('x')}`);
  });

  it('drops control characters: a reply cannot clear the screen or recolour the terminal', () => {
    const out = terminalMarkdown('before \x1b[2J\x1b]0;title\x07 after `\x1b[31mred`', false);
    expect(out).toBe('before [2J]0;title after [31mred');
    expect(out).not.toMatch(/[\x00-\x08\x0b-\x1f\x7f]/);
  });

  it('a stream gives each block once it is complete, and the same text as rendering the whole', () => {
    const stream = new MarkdownStream(false);
    // What the terminal prints: one line per piece.
    const printed: string[] = [];
    for (let i = 0; i < REPLY.length; i += 3) {
      const piece = stream.push(REPLY.slice(i, i + 3));
      // The paragraph is not printed while it could still grow.
      if (i + 3 < REPLY.indexOf('- one')) expect(printed.join('')).not.toContain('Done:');
      if (piece !== null) printed.push(piece);
    }
    expect(printed.length).toBeGreaterThan(2); // blocks came out while streaming, not all at the end
    printed.push(stream.end(REPLY) ?? '');
    expect(printed.join('\n')).toBe(terminalMarkdown(REPLY, false));
    expect(stream.end()).toBeNull(); // ended: the next reply starts afresh
  });
});

describe('the terminal chat', () => {
  let h: Harness;
  afterEach(async () => {
    await h.close();
  });

  function screen() {
    const input = new PassThrough();
    const output = new PassThrough();
    let text = '';
    output.on('data', (c) => {
      text += c.toString();
    });
    return { input, output, text: () => text };
  }

  it('renders /status, a streamed reply and an error line instead of printing their Markdown', async () => {
    const t = screen();
    h = await startHarness({
      tools: testTools,
      channels: () => [new ConsoleChannel({ conversation: 'md', input: t.input, output: t.output, color: true })],
    });
    t.input.write('/status\n');
    await waitFor(() => t.text().includes('Turn: idle'), 'the status');
    expect(t.text()).toContain(BOLD('Status'));
    expect(t.text()).toContain(`Model: ${CODE('test-model')}`);
    h.llm.push({ text: REPLY, chunkSize: 4 });
    t.input.write('show me\n');
    await waitFor(() => t.text().includes('1 | 22'), 'the reply');
    expect(t.text()).toContain(`${BOLD('Done')}: wrote ${CODE('notes/a.txt')}`);
    h.llm.push({ status: 404 });
    t.input.write('again\n');
    await waitFor(() => t.text().includes('error: HTTP 404'), 'the error line');
    expect(t.text()).toContain(`(${CODE('switchboard doctor')} checks)`);
    expect(t.text()).not.toContain('**');
    expect(t.text()).not.toContain('`');
  });

  it('inside start, it says /quit stops switchboard and the web chat too, and says it again when leaving', async () => {
    const t = screen();
    let ended = 0;
    h = await startHarness({
      tools: testTools,
      channels: () => [
        new ConsoleChannel({
          conversation: 'console',
          input: t.input,
          output: t.output,
          alsoStops: 'the web chat',
          onEnd: () => ended++,
        }),
      ],
    });
    await waitFor(() => t.text().includes('switchboard chat — conversation'), 'the greeting');
    expect(t.text()).toContain('/quit (or Ctrl-C with nothing running) stops switchboard, the web chat too.');
    t.input.write('/help\n');
    await waitFor(() => t.text().split('stops switchboard, the web chat too.').length > 2, '/help says it too');
    t.input.write('/quit\n');
    await waitFor(() => t.text().includes('(leaving: switchboard stops, the web chat too)'), 'the leaving line');
    expect(ended).toBe(1);
  });
});
