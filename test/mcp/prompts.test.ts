/**
 * `/prompt` in Telegram against server-everything's prompts: listed by `/prompt` and `/help`, run
 * with key=value arguments (quoted values, an embedded resource) as the user's message, and each
 * refusal (missing or unknown argument, unknown prompt or server) answered without a model call.
 */
import { afterAll, afterEach, describe, expect, it, onTestFailed } from 'vitest';
import { commands } from '../../src/core/commands.js';
import { parsePromptArgs } from '../../src/mcp/prompts.js';
import { alice, startTelegramTest, type TelegramTest, waitFor, waitForText } from '../telegram/setup.js';
import { everythingStdio } from './reference-servers.js';

let t: TelegramTest | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

async function start() {
  t = await startTelegramTest({ overrides: { mcp: { servers: { ev: everythingStdio() } } } });
  await waitFor(() => t?.h.core.registry.get('mcp__ev__echo'), 'server connected', 15_000);
  return t;
}
// Starting Telegram's emulator, a core and server-everything costs seconds: the tests that need
// no fresh catalog share one, each reading only the model requests made after it began.
let shared: TelegramTest | undefined;
let firstRequest = 0;
/** Close the shared setup; a test that failed leaves it to be started anew, not reused. */
async function closeShared() {
  const s = shared;
  shared = undefined;
  await s?.close();
}
afterAll(closeShared);
/** The shared setup; its model requests from here on are this test's. */
async function startShared(): Promise<TelegramTest> {
  shared ??= await startTelegramTest({ overrides: { mcp: { servers: { ev: everythingStdio() } } } });
  await waitFor(() => shared?.h.core.registry.get('mcp__ev__echo'), 'server connected', 15_000);
  firstRequest = shared.llm.chatRequests().length;
  onTestFailed(closeShared);
  return shared;
}
/** The model requests of this test (all of them on a setup of its own). */
const requests = (tt: TelegramTest) => tt.llm.chatRequests().slice(tt === shared ? firstRequest : 0);
const lastUserMessage = (tt: TelegramTest, round = 0) =>
  requests(tt)
    [round]?.body.messages.filter((m: any) => m.role === 'user')
    .at(-1)?.content;

describe('/prompt', () => {
  it('lists the prompts with their arguments, and /help names the command', async () => {
    const tt = await start();
    tt.emu.sendText(alice, '/prompt');
    const list = await waitForText(tt.emu, alice.id, (p) => p.startsWith('MCP prompts'), '/prompt list');
    expect(list.plain).toContain(
      'args-prompt city state? — A prompt with two arguments, one required and one optional',
    );
    expect(list.plain).toContain('simple-prompt');
    tt.emu.sendText(alice, '/help');
    const help = await waitForText(tt.emu, alice.id, (p) => p.startsWith('Commands'), '/help');
    expect(help.plain).toContain("/prompt [server name key=value …] — Run an MCP server's prompt");
    expect(tt.llm.chatRequests()).toHaveLength(0);
    // Offered while a server serves prompts: with the last one closed, the command is gone.
    expect(commands().map((c) => c.name)).toContain('prompt');
    await tt.close();
    t = undefined;
    expect(commands().map((c) => c.name)).not.toContain('prompt');
  });

  it("runs a prompt with arguments as the user's message", async () => {
    const tt = await startShared();
    tt.llm.push({ text: 'Sunny.' });
    tt.emu.sendText(alice, '/prompt ev args-prompt city="New York" state=NY');
    await waitForText(
      tt.emu,
      alice.id,
      (p) => p.includes('Prompt args-prompt of ev sent as your message'),
      'confirmation',
    );
    await waitForText(tt.emu, alice.id, (p) => p === 'Sunny.', 'the answer', 20_000);
    expect(lastUserMessage(tt)).toBe("What's weather in New York, NY?");
  });

  it("includes a prompt's embedded text resource", async () => {
    const tt = await startShared();
    tt.llm.push({ text: 'Analysed.' });
    tt.emu.sendText(alice, '/prompt ev resource-prompt resourceType=Text resourceId=2');
    await waitForText(tt.emu, alice.id, (p) => p === 'Analysed.', 'the answer', 20_000);
    const text = lastUserMessage(tt) as string;
    expect(text).toMatch(
      /^This prompt includes the Text resource with id: 2\. Please analyze the following resource:\n\n\[resource demo:\/\/resource\/dynamic\/text\/2\]\n/,
    );
  });

  it('refuses a missing or unknown argument, an unknown prompt or server, and a server error, without a model call', async () => {
    const tt = await startShared();
    const cases: Array<[string, string]> = [
      ['/prompt ev args-prompt', 'The prompt args-prompt needs city=…'],
      ['/prompt ev args-prompt city=Oslo country=NO', 'The prompt args-prompt has no argument country'],
      ['/prompt ev nope', 'ev has no prompt "nope"'],
      ['/prompt zz simple-prompt', 'No connected MCP server "zz" with prompts (servers with prompts: ev)'],
      ['/prompt ev resource-prompt resourceType=Video resourceId=1', 'The server ev refused the prompt: '],
      ['/prompt ev args-prompt city', 'Could not read the arguments: expected key=value, found "city"'],
    ];
    for (const [command, answer] of cases) {
      tt.emu.sendText(alice, command);
      await waitForText(tt.emu, alice.id, (p) => p.includes(answer), command);
    }
    expect(requests(tt)).toHaveLength(0);
  });
});

describe('parsePromptArgs', () => {
  it('reads bare and quoted values and refuses a word without =', () => {
    expect(parsePromptArgs(' a=1 b="two words" c="say \\"hi\\"" d= ')).toEqual({
      ok: true,
      args: { a: '1', b: 'two words', c: 'say "hi"', d: '' },
    });
    expect(parsePromptArgs('a=1 oops')).toEqual({ ok: false, error: 'expected key=value, found "oops"' });
  });
});
