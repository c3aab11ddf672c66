import { pino } from 'pino';
import { TelegramChannel } from '../../src/channels/telegram/index.js';
import type { TelegramChannelOptions } from '../../src/channels/telegram/channel.js';
import { HttpServer } from '../../src/http/server.js';
import type { AnyTool } from '../../src/tools/types.js';
import { type ScriptedLlm, startScriptedLlm } from '../emulators/llm.js';
import { type SentMessage, type TelegramEmulator, startTelegramEmulator } from '../emulators/telegram.js';
import { type ConfigOverrides, type Harness, startHarness, waitFor } from '../helpers/harness.js';
import { testTools } from '../helpers/test-tools.js';

export const alice = { id: 111, first_name: 'Alice' };
export const bob = { id: 222, first_name: 'Bob' };
export const stranger = { id: 333, first_name: 'Mallory' };

/**
 * A supergroup for group tests: `group` addresses a message to it, `mention(text)` is a message
 * that mentions the bot (how a group talks to it).
 */
export function groupChat(chatId: number) {
  const group = { chatId, chatType: 'supergroup' as const };
  const mention = (text: string) => ({
    ...group,
    entities: [{ type: 'mention', offset: 0, length: 21 }],
    text: `@switchboard_test_bot ${text}`,
  });
  return { group, mention };
}

/** A running Telegram end-to-end setup. */
export interface TelegramTest {
  h: Harness;
  emu: TelegramEmulator;
  llm: ScriptedLlm;
  dir: string;
  /** The channel of the current "process" (changes on restart). */
  channel(): TelegramChannel;
  /** Base URL of the shared HTTP server (webhook mode only). */
  httpUrl: string | null;
  restart(): Promise<void>;
  close(): Promise<void>;
}

/** Options of {@link startTelegramTest}. */
export interface TelegramTestOptions {
  telegram?: Record<string, unknown>;
  overrides?: ConfigOverrides;
  tools?: AnyTool[];
  webhook?: boolean;
  /** Runs after the emulator and the model start and before the bot does (inject "pending" updates, script the model). */
  beforeStart?: (emu: TelegramEmulator, llm: ScriptedLlm) => void;
  /** How often the core's sweep runs (the harness's default: 50 ms); a long one shows what waits for it. */
  sweepIntervalMs?: number;
  /** Extra options of the channel (e.g. a short command-menu retry, a low short-retry threshold). */
  channelOptions?: Pick<TelegramChannelOptions, 'commandMenuRetryMs' | 'shortRetryAfterSeconds'>;
}

const log = pino({ level: process.env.TEST_LOG ?? 'silent' });

/** Start emulator, model, core and channel. Alice and Bob are allowed; Mallory is not. */
export async function startTelegramTest(options: TelegramTestOptions = {}): Promise<TelegramTest> {
  const emu = await startTelegramEmulator();
  const llm = await startScriptedLlm();
  options.beforeStart?.(emu, llm);
  let http: HttpServer | null = null;
  let httpUrl: string | null = null;
  const telegram: Record<string, unknown> = {
    bot_token: emu.token,
    api_root: emu.apiRoot,
    allowed_users: `${alice.id},${bob.id}`,
    stream_interval_ms: 100,
    ...options.telegram,
  };
  if (options.webhook) {
    http = new HttpServer(log);
    const port = await http.listen(0, '127.0.0.1');
    httpUrl = `http://127.0.0.1:${port}`;
    telegram.webhook_url = `${httpUrl}/telegram/webhook`;
    telegram.webhook_secret = 'right-secret';
  }
  let channel: TelegramChannel | null = null;
  const h = await startHarness({
    llm,
    overrides: { ...options.overrides, telegram },
    tools: options.tools ?? testTools,
    ...(options.sweepIntervalMs ? { sweepIntervalMs: options.sweepIntervalMs } : {}),
    channels: (config, paths) => {
      channel = new TelegramChannel({
        config,
        http: http ?? new HttpServer(log),
        log,
        paths,
        ...options.channelOptions,
      });
      return [channel];
    },
  });
  return {
    h,
    emu,
    llm,
    dir: h.dir,
    httpUrl,
    channel: () => channel as unknown as TelegramChannel,
    restart: () => h.restart(),
    async close() {
      await h.close();
      await http?.close();
      await emu.close();
      await llm.close();
    },
  };
}

/** Text messages of a chat (not files). */
export function texts(emu: TelegramEmulator, chatId: number): SentMessage[] {
  return emu.messages(chatId).filter((m) => m.kind === 'text');
}

/** Wait for a text message in a chat whose visible text satisfies `match`. */
export function waitForText(
  emu: TelegramEmulator,
  chatId: number,
  match: (plain: string) => boolean,
  what: string,
  timeoutMs = 15_000,
): Promise<SentMessage> {
  return waitFor(() => texts(emu, chatId).find((m) => match(m.plain)), what, timeoutMs);
}

/** Wait for the next message with inline buttons (an approval or question card). */
export function waitForCard(
  emu: TelegramEmulator,
  chatId: number,
  what = 'a card',
  timeoutMs = 15_000,
): Promise<SentMessage> {
  return waitFor(() => texts(emu, chatId).find((m) => m.reply_markup?.inline_keyboard?.length), what, timeoutMs);
}

/** The callback data of a card's button whose text contains `label`. */
export function button(card: SentMessage, label: string): string {
  const b = (card.reply_markup?.inline_keyboard ?? []).flat().find((x: { text: string }) => x.text.includes(label));
  if (!b) throw new Error(`no button "${label}" on card ${card.message_id}`);
  return b.callback_data as string;
}

export { waitFor };
