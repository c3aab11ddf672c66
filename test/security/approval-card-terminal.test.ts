/**
 * The approval prompt in the terminal and on JSONL: the terminal prints the whole arguments with
 * every escape and direction character marked (an ANSI escape in a command cannot erase or hide a
 * line of the prompt), and the JSONL `preview` is the whole text, as the tool receives it.
 */
import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { ConsoleChannel } from '../../src/channels/console/index.js';
import { eventToLine } from '../../src/channels/console/protocol.js';
import { visibleText } from '../../src/delivery/visible.js';
import { bashTool } from '../../src/tools/builtins/bash.js';
import { type Harness, startHarness, waitFor } from '../helpers/harness.js';
import { hostileCommand, RAW_HIDDEN } from './hostile-args.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

describe('the approval prompt in a terminal', () => {
  it('prints the whole arguments, marked, and the JSONL line carries them whole and raw', async () => {
    const input = new PassThrough();
    const output = new PassThrough();
    let screen = '';
    output.on('data', (c) => {
      screen += c.toString();
    });
    const events: unknown[] = [];
    h = await startHarness({
      tools: [bashTool],
      channels: () => [new ConsoleChannel({ conversation: 'term', input, output })],
    });
    h.core.subscribe((_id, event) => {
      if (event.type === 'approval_requested') events.push(eventToLine(event));
    });
    const command = hostileCommand(5000);
    h.llm.push({ toolCalls: [{ name: 'bash', arguments: JSON.stringify({ command }) }] }, { text: 'not run' });
    input.write('list\n');
    await waitFor(() => screen.includes('[y] once'), 'approval prompt');
    const preview = `workdir . · in the foreground, default timeout\n$ ${command}`;
    expect(screen).toContain(`\n${visibleText(preview)}\n[y] once`);
    expect(screen).toContain('touch pwned.txt⟨TAB⟩# ⟨U+202E RLO⟩txt.exe⟨U+202C PDF⟩ ⟨ESC⟩[8mhidden');
    // The prompt's own line clearing (`\r\x1b[K` before a line) aside, nothing raw from the command.
    expect(screen.replace(/\r\x1b\[K/g, '')).not.toMatch(RAW_HIDDEN);
    await waitFor(() => events.length === 1, 'the JSONL line');
    expect(events[0]).toMatchObject({ type: 'approval_requested', tool: 'bash', preview });
    input.write('n\n');
    input.write('\n');
    await waitFor(() => screen.includes('not run'), 'reply');
  });
});
