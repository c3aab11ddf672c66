/** The Discord emulator against the real SDK: REST routes and errors, and the gateway session. */
import { Client, GatewayDispatchEvents, GatewayIntentBits } from '@discordjs/core';
import { DiscordAPIError, REST, RateLimitError } from '@discordjs/rest';
import { WebSocketManager } from '@discordjs/ws';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type DiscordEmulator, startDiscordEmulator } from '../emulators/discord.js';
import { waitFor } from '../helpers/harness.js';

let emu: DiscordEmulator;
let gateway: WebSocketManager | null = null;
const alice = { id: '9001', username: 'alice' };

beforeEach(async () => {
  emu = await startDiscordEmulator();
});
afterEach(async () => {
  await gateway?.destroy();
  gateway = null;
  await emu.close();
});

function sdk(token = emu.token) {
  const rest = new REST({ api: emu.apiRoot, retries: 0, rejectOnRateLimit: () => true }).setToken(token);
  gateway = new WebSocketManager({ token, intents: GatewayIntentBits.DirectMessages, rest });
  return { rest, client: new Client({ rest, gateway }) };
}

describe('Discord emulator', () => {
  it('serves the SDK: READY over the gateway, a DM dispatched, a reply posted and edited', async () => {
    const { client } = sdk();
    const seen: string[] = [];
    client.on(GatewayDispatchEvents.MessageCreate, ({ data }) => {
      seen.push(data.content);
    });
    await gateway?.connect();
    await waitFor(() => emu.sockets() === 1);
    emu.dm(alice, 'hello');
    await waitFor(() => seen.length === 1);
    expect(seen).toEqual(['hello']);
    expect((await client.api.users.getCurrent()).id).toBe(emu.bot.id);
    const dm = emu.dmChannel(alice);
    const posted = await client.api.channels.createMessage(dm.id, { content: 'hi' });
    await client.api.channels.editMessage(dm.id, posted.id, { content: 'hi there' });
    expect(emu.botMessages(dm.id).map((m) => [m.content, m.edits])).toEqual([['hi there', 1]]);
    const withFile = await client.api.channels.createMessage(dm.id, {
      content: 'a file',
      files: [{ name: 'a.txt', data: Buffer.from('abc') }],
    });
    expect(emu.messages.get(withFile.id)?.files['a.txt']?.toString()).toBe('abc');
  });

  it('answers with Discord errors: 401, Unknown Message, 50035 over 2000, 429 with retry_after', async () => {
    const { client } = sdk();
    const dm = emu.dmChannel(alice);
    const bad = sdk('wrong').client;
    await expect(bad.api.users.getCurrent()).rejects.toMatchObject({ status: 401 });
    const gone = await client.api.channels.editMessage(dm.id, '1', { content: 'x' }).catch((e: unknown) => e);
    expect(gone).toBeInstanceOf(DiscordAPIError);
    expect(gone).toMatchObject({ status: 404, code: 10008 });
    await expect(client.api.channels.createMessage(dm.id, { content: 'x'.repeat(2001) })).rejects.toMatchObject({
      code: 50035,
    });
    emu.rateLimitNext('POST', /\/messages$/, 2.5);
    const limited = await client.api.channels.createMessage(dm.id, { content: 'x' }).catch((e: unknown) => e);
    expect(limited).toBeInstanceOf(RateLimitError);
    expect((limited as RateLimitError).retryAfter).toBeGreaterThanOrEqual(2500);
  });

  it('resumes a dropped gateway session', async () => {
    sdk();
    await gateway?.connect();
    await waitFor(() => emu.sockets() === 1);
    emu.dropGateway();
    await waitFor(() => emu.resumes === 1 && emu.sockets() === 1, 'a resumed session', 15_000);
    expect(emu.identifies).toBe(1);
  });
});
