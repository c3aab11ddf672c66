import { pino } from 'pino';
import { DiscordChannel } from '../../src/channels/discord/channel.js';
import type { AnyTool } from '../../src/tools/types.js';
import { type DiscordEmulator, type EmuMessage, startDiscordEmulator } from '../emulators/discord.js';
import { type ScriptedLlm, startScriptedLlm } from '../emulators/llm.js';
import { type ConfigOverrides, type Harness, startHarness, waitFor } from '../helpers/harness.js';
import { testTools } from '../helpers/test-tools.js';

export const alice = { id: '111', username: 'alice', global_name: 'Alice' };
export const bob = { id: '222', username: 'bob', global_name: 'Bob' };
export const stranger = { id: '333', username: 'mallory', global_name: 'Mallory' };

/** A running Discord end-to-end setup. */
export interface DiscordStack {
  h: Harness;
  emu: DiscordEmulator;
  llm: ScriptedLlm;
  dir: string;
  channel(): DiscordChannel;
  restart(): Promise<void>;
  close(): Promise<void>;
}

const log = pino({ level: process.env.TEST_LOG ?? 'silent' });

/** Start emulator, model, core and channel. Alice and Bob are allowed; Mallory is not. */
export async function startDiscordStack(
  options: { discord?: Record<string, unknown>; overrides?: ConfigOverrides; tools?: AnyTool[] } = {},
): Promise<DiscordStack> {
  const emu = await startDiscordEmulator();
  const llm = await startScriptedLlm();
  const discord = {
    bot_token: emu.token,
    api_root: emu.apiRoot,
    gateway_url: emu.gatewayUrl,
    allowed_users: `${alice.id},${bob.id}`,
    stream_interval_ms: 100,
    ...options.discord,
  };
  let channel: DiscordChannel | null = null;
  const h = await startHarness({
    llm,
    overrides: { ...options.overrides, discord },
    tools: options.tools ?? testTools,
    channels: (config, paths) => {
      channel = new DiscordChannel({ config, log, paths, commandRetryMs: 50 });
      return [channel];
    },
  });
  const dir = h.dir;
  await waitFor(() => emu.sockets() > 0 && channel?.health() === null, 'gateway ready');
  return {
    h,
    emu,
    llm,
    dir,
    channel: () => channel as DiscordChannel,
    async restart() {
      await h.restart();
      await waitFor(() => emu.sockets() > 0 && channel?.health() === null, 'gateway ready again');
    },
    async close() {
      await h.close();
      await emu.close();
      await llm.close();
    },
  };
}

/** Wait for a bot message in a channel whose content satisfies `match`. */
export function waitForMessage(
  emu: DiscordEmulator,
  channelId: string,
  match: (content: string) => boolean,
  what: string,
): Promise<EmuMessage> {
  return waitFor(() => emu.botMessages(channelId).find((m) => match(m.content)), what, 15_000);
}

/** Wait for the next bot message with buttons (a card) in a channel. */
export function waitForCard(emu: DiscordEmulator, channelId: string, what = 'a card'): Promise<EmuMessage> {
  return waitFor(() => emu.botMessages(channelId).find((m) => m.components.length > 0), what, 15_000);
}

/** The `custom_id` of a card's button whose label contains `label`. */
export function button(card: EmuMessage, label: string): string {
  const b = card.components.flatMap((r) => r.components).find((c) => String(c.label).includes(label));
  if (!b) throw new Error(`no button "${label}" on card ${card.id}`);
  return String(b.custom_id);
}

/** Labels of a card's buttons, row by row. */
export function labels(card: EmuMessage): string[][] {
  return card.components.map((r) => r.components.map((c) => String(c.label)));
}

export { waitFor };
