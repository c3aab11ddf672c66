// biome-ignore-all lint/suspicious/noExplicitAny: Slack payloads and Block Kit JSON are loosely typed by nature
/**
 * End-to-end setup for Slack tests: the Slack emulator, the scripted model, a real Core over a
 * temp SQLite file, the shared HttpServer and the Slack channel in HTTP or Socket Mode — wired
 * the way `src/main.ts` wires them. `restart()` closes core and server and opens new ones over
 * the same database and workspace (a process restart), against the same emulator.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { SlackChannel, type SlackChannelOptions } from '../../src/channels/slack/slack-channel.js';
import { Core } from '../../src/core/core.js';
import { HttpServer } from '../../src/http/server.js';
import { JobService } from '../../src/jobs/service.js';
import { plugins } from '../../plugins/index.js';
import type { AnyTool } from '../../src/tools/types.js';
import { startScriptedLlm, type ScriptedLlm } from '../emulators/llm.js';
import { startSlackEmulator, type EmuMessage, type SlackEmulator } from '../emulators/slack.js';
import { eventCallback } from '../emulators/slack-payloads.js';
import { type ConfigOverrides, testConfig, waitFor } from '../helpers/harness.js';
import { dangerTool, echoTool } from '../helpers/test-tools.js';
import { channelKinds } from '../../src/channels/registry.js';

export { waitFor };

/** Allowed Slack users in every stack; `UADMIN` is an admin, `UBOB` is allowed too. */
export const ALICE = 'UALICE';
export const BOB = 'UBOB';
export const ADMIN = 'UADMIN';
export const STRANGER = 'USTRANGER';

/** A running Slack stack. */
export interface SlackStack {
  mode: 'http' | 'socket';
  emu: SlackEmulator;
  llm: ScriptedLlm;
  core: Core;
  channel: SlackChannel;
  dir: string;
  workspace: string;
  /** Deliver a Slack event (wrapped in an event_callback) to the app. */
  sendEvent(
    event: Record<string, unknown>,
    options?: { eventId?: string; retryNum?: number },
  ): Promise<{ status: number; body: string }>;
  /** Bot messages of a channel/thread whose current text or blocks contain `needle`. */
  findBot(channel: string, needle: string, threadTs?: string): EmuMessage[];
  /** Wait until every delivered event reached the core and every turn finished. */
  quiesce(): Promise<void>;
  restart(): Promise<void>;
  close(): Promise<void>;
}

/** Full visible text of a message: its section/context/markdown blocks, or `text` without blocks. */
export function visibleText(m: { text: string; blocks?: any[] }): string {
  if (!m.blocks?.length) return m.text;
  return m.blocks
    .map((b) =>
      b.type === 'task_card'
        ? taskCardText(b)
        : b.type === 'markdown'
          ? b.text
          : (b.text?.text ?? (b.elements ?? []).map((e: any) => e.text?.text ?? e.text ?? '').join(' ')),
    )
    .join('\n');
}

/** A task card as one line: `[status] title`, then ` — ` and its output's text when it has some. */
export function taskCardText(b: any): string {
  const output = (b.output?.elements ?? [])
    .flatMap((e: any) => e.elements ?? [])
    .map((x: any) => x.text ?? '')
    .join('');
  return `[${b.status}] ${b.title}${output ? ` — ${output}` : ''}`;
}

/** Start a stack. Close it in `afterEach`. */
export async function startSlackStack(
  mode: 'http' | 'socket',
  options: {
    overrides?: ConfigOverrides;
    tools?: AnyTool[];
    /** Extra options of the channel (e.g. a low short-retry threshold). */
    channelOptions?: Pick<SlackChannelOptions, 'shortRetryAfterSeconds'>;
  } = {},
): Promise<SlackStack> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'switchboard-slack-'));
  const workspace = path.join(dir, 'workspace');
  mkdirSync(workspace, { recursive: true });
  const emu = await startSlackEmulator();
  const llm = await startScriptedLlm();
  const overrides = options.overrides ?? {};
  const config = testConfig(dir, llm.url, {
    ...overrides,
    slack: {
      bot_token: 'xoxb-emulator',
      app_token: mode === 'socket' ? 'xapp-emulator' : undefined,
      signing_secret: emu.app.signingSecret,
      // Both spellings are accepted: with a trailing slash in HTTP mode, without in Socket Mode.
      api_url: mode === 'socket' ? emu.apiUrl.replace(/\/$/, '') : emu.apiUrl,
      allowed_users: [ALICE, BOB],
      stream_interval_ms: 100,
      ...(overrides.slack ?? {}),
    },
    access: { admins: [`slack:${ADMIN}`], ...(overrides.access ?? {}) },
  });
  const log = pino({ level: process.env.TEST_LOG ?? 'silent' });
  emu.app.mode = mode;

  const open = async () => {
    const core = await Core.open({
      config,
      log,
      tools: options.tools ?? [echoTool, dangerTool],
      // The first-party plugins as users run them: send_attachment, and voice (never offered on Slack).
      plugins,
      // The job service as `main` has it: /switchboard jobs, sethome and the job tools.
      services: [new JobService()],
      channelKinds,
      sweepIntervalMs: 50,
      shutdownGraceMs: 500,
    });
    const http = new HttpServer(log);
    const channel = new SlackChannel({
      config,
      http,
      log,
      paths: core.paths,
      retryConfig: { retries: 4, factor: 1, minTimeout: 5, maxTimeout: 20 },
      ...options.channelOptions,
    });
    core.addChannel(channel);
    const port = await http.listen(0, '127.0.0.1');
    emu.app.url = `http://127.0.0.1:${port}/slack/events`;
    await core.start();
    if (mode === 'socket') await waitFor(() => emu.socketCount() > 0, 'socket connection');
    return { core, http, channel };
  };

  let current = await open();
  const stack: SlackStack = {
    mode,
    emu,
    llm,
    get core() {
      return current.core;
    },
    get channel() {
      return current.channel;
    },
    dir,
    workspace,
    sendEvent: (event, o = {}) =>
      emu.deliver('events_api', eventCallback(event, { eventId: o.eventId, botUserId: emu.botUserId }), {
        retryNum: o.retryNum,
      }),
    async quiesce() {
      await current.channel.settled();
      await current.core.idle();
    },
    findBot: (channel, needle, threadTs) =>
      emu.botMessages(channel, threadTs).filter((m) => visibleText(m).includes(needle)),
    async restart() {
      await current.core.close();
      await current.http.close();
      if (mode === 'socket') await waitFor(() => emu.socketCount() === 0, 'socket closed');
      current = await open();
    },
    async close() {
      await current.core.close();
      await current.http.close();
      await emu.close();
      await llm.close();
      // A file the stopped stack was still closing can appear while the folder is removed: retry.
      rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 });
    },
  } as SlackStack;
  return stack;
}

/** Write a file into a stack's workspace. */
export async function writeWorkspaceFile(stack: SlackStack, rel: string, data: string | Buffer): Promise<string> {
  const abs = path.join(stack.workspace, rel);
  mkdirSync(path.dirname(abs), { recursive: true });
  await writeFile(abs, data);
  return abs;
}
