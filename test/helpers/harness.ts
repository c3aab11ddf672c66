/**
 * Test harness: a real Core over a temp SQLite file and workspace, talking real HTTP to the
 * scripted LLM server, with a {@link RecordingChannel} (or channels you pass). `restart()` closes
 * the core and opens a new one over the same database file — the restart tests use it.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Channel } from '../../src/contract/channel.js';
import { configSchema, type Config } from '../../src/config.js';
import { Core } from '../../src/core/core.js';
import type { InboundMessage } from '../../src/contract/chat.js';
import type { SubmitResult } from '../../src/contract/core.js';
import type { CoreEvent } from '../../src/contract/events.js';
import { defaultToolset, mcpSources } from '../../src/compose.js';
import { silentLogger } from '../../src/log.js';
import type { AnyTool } from '../../src/tools/types.js';
import { PathPolicy } from '../../src/tools/path-policy.js';
import { startScriptedLlm, type ScriptedLlm } from '../emulators/llm.js';
import { RecordingChannel } from './recording-channel.js';
import { WAIT_MS } from './budgets.js';
import { testDatabaseUrl } from './test-db.js';

/** Deep partial of the raw (TOML-shaped) configuration. */
export type ConfigOverrides = { [K in keyof Config]?: Partial<Record<keyof Config[K], unknown>> };

/** Build a validated config for tests: temp paths, the scripted LLM, fast intervals. */
export function testConfig(dir: string, llmUrl: string, overrides: ConfigOverrides = {}): Config {
  const raw: Record<string, Record<string, unknown>> = {
    llm: { base_url: llmUrl, api_key: 'test-key', model: 'test-model', max_retries: 2 },
    store: { database_url: testDatabaseUrl(dir) },
    workspace: { root: path.join(dir, 'workspace') },
    log: { level: 'silent' },
    access: { allowed_users: ['test:u1', 'test:u2'] },
    http: { port: 0, host: '127.0.0.1' },
  };
  for (const [section, values] of Object.entries(overrides)) {
    raw[section] = { ...(raw[section] ?? {}), ...(values as Record<string, unknown>) };
  }
  return configSchema.parse(raw);
}

/** Options of {@link startHarness}. */
export interface HarnessOptions {
  overrides?: ConfigOverrides;
  /** Tools to register; default: the full default toolset (built-ins and plugins). */
  tools?: AnyTool[];
  /**
   * Channels, made anew for each "process" from its configuration and workspace policy; default:
   * one RecordingChannel named `test`.
   */
  channels?: (config: Config, paths: PathPolicy) => Channel[];
  llm?: ScriptedLlm;
  /** Use an existing temp dir (a second "process" over the same files). */
  dir?: string;
  /** How often the core looks for stranded work; default 50 ms (tests of recovery want it soon). */
  sweepIntervalMs?: number;
}

/** A running core with its scripted model and recording channel. */
export interface Harness {
  core: Core;
  llm: ScriptedLlm;
  config: Config;
  dir: string;
  channel: RecordingChannel;
  /** Every event of every conversation, in emit order. */
  events: Array<{ conversationId: string; event: CoreEvent }>;
  /** Submit a message on the recording channel as `user` (default `u1`), through `core.receive`. */
  send(text: string, options?: Partial<Omit<InboundMessage, 'attachments'>>): Promise<SubmitResult>;
  /** Close the core and open a new one over the same database and workspace. */
  restart(): Promise<void>;
  close(): Promise<void>;
}

/** Poll `check` until it returns a truthy value; fails after `timeoutMs` with `what`. */
export async function waitFor<T>(
  check: () => T | Promise<T>,
  what = 'condition',
  timeoutMs = WAIT_MS,
): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v) return v as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** Start a harness. Close it in `afterEach`. */
export async function startHarness(options: HarnessOptions = {}): Promise<Harness> {
  const dir = options.dir ?? mkdtempSync(path.join(os.tmpdir(), 'switchboard-test-'));
  mkdirSync(path.join(dir, 'workspace'), { recursive: true });
  const llm = options.llm ?? (await startScriptedLlm());
  const ownsLlm = !options.llm;
  const config = testConfig(dir, llm.url, options.overrides);
  const events: Harness['events'] = [];

  const open = async () => {
    const paths = new PathPolicy({ root: config.workspace.root, denyGlobs: config.workspace.deny_globs });
    const channels = options.channels ? options.channels(config, paths) : [new RecordingChannel()];
    const toolset = defaultToolset(config);
    const core = await Core.open({
      config,
      ...toolset,
      tools: options.tools ?? toolset.tools,
      sources: await mcpSources(config, silentLogger()),
      sweepIntervalMs: options.sweepIntervalMs ?? 50,
      shutdownGraceMs: 500,
    });
    for (const ch of channels) core.addChannel(ch);
    core.subscribe((conversationId, event) => events.push({ conversationId, event }));
    await core.start();
    const channel =
      (channels.find((c) => c instanceof RecordingChannel) as RecordingChannel | undefined) ?? new RecordingChannel();
    return { core, channel };
  };

  let current = await open();
  const harness: Harness = {
    get core() {
      return current.core;
    },
    get channel() {
      return current.channel;
    },
    llm,
    config,
    dir,
    events,
    send: (text, o = {}) => current.core.submit({ channel: 'test', chatKey: 'chat1', userId: 'u1', text, ...o }),
    async restart() {
      await current.core.close();
      current = await open();
    },
    async close() {
      await current.core.close();
      if (ownsLlm) await llm.close();
      // A file the stopped core was still closing can appear while the folder is removed: retry (up to
      // 5.5 s in all, the delays growing by 100 ms: on a loaded machine 1.5 s was once too short).
      if (!options.dir) rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
    },
  } as Harness;
  return harness;
}
