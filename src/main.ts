/**
 * Composition root: config → store → tools → core → HTTP → channels. `switchboard start` runs
 * every channel the configuration turns on (see `channels/registry.ts`; the web chat by default);
 * with no platform token the console chat runs beside it when a terminal is attached.
 */
import { probeBwrapInBackground, sandboxStatus } from './tools/sandbox.js';
import { limitPlan, probePrlimitInBackground } from './tools/sandbox-limits.js';
import { networkStatus } from './tools/sandbox-network.js';
import type { Logger } from 'pino';
import type { Channel, LinkSignIn } from './contract/channel.js';
import { channelKinds, configuredKinds } from './channels/registry.js';
import { defaultToolset, mcpSources } from './compose.js';
import { INSTANCE_HEADER } from './doctor-port.js';
import type { Config } from './config.js';
import { Core } from './core/core.js';
import { modelKeyMissing } from './core/model-check.js';
import { MODEL_NOT_CONFIGURED } from './delivery/notices.js';
import { metricsRefusal } from './http/metrics-access.js';
import { HttpServer } from './http/server.js';
import { notifyRoute } from './jobs/api-notify.js';
import { JobService } from './jobs/service.js';
import { formatSourceStatus } from './tools/source.js';

/** A running switchboard. */
export interface App {
  core: Core;
  /** The HTTP server, when one runs (not in console mode). */
  http: HttpServer | null;
  /** Bound HTTP port, or null. */
  port: number | null;
  /** The channel whose people sign in by login links (the web chat), when one runs. */
  signIn?: SignInChannel;
  close(): Promise<void>;
}

/** Whether a platform channel is configured (one whose users come from the platform, not from sign-in links). */
export function hasPlatform(config: Config): boolean {
  return configuredKinds(config).some((k) => !k.signedIn);
}

/** A started channel that makes login links. */
export type SignInChannel = Channel & LinkSignIn;

/** The channel among the started ones that makes the login links the command line prints (the web chat). */
function signInOf(channels: Channel[]): SignInChannel | undefined {
  return channels.find((c): c is SignInChannel => typeof (c as Partial<LinkSignIn>).loginLink === 'function');
}

/** Where the terminal chat reads and writes. */
export interface TerminalOptions {
  jsonl: boolean;
  conversation: string;
  input: NodeJS.ReadableStream;
  output: NodeJS.WritableStream;
  onEnd: () => void;
  /** What else leaving this terminal chat stops (`start`'s console ends the process: "the web chat"). */
  alsoStops?: string;
}

async function openCore(config: Config, log: Logger, groupCommit = false): Promise<Core> {
  // Every chat would fail until a model is set: say so now, not at the first message.
  if (modelKeyMissing(config)) log.warn(MODEL_NOT_CONFIGURED);
  const toolset = defaultToolset(config);
  return Core.open({ config, log, ...toolset, sources: await mcpSources(config, log), groupCommit });
}

/** Serve `/healthz` (status, then the leases this instance holds) and `/metrics` (token or loopback, see `metrics-access.ts`). */
function addOpsRoutes(http: HttpServer, core: Core, channels: Channel[], isStarted: () => boolean): void {
  http.route('/healthz', (_req, res) => {
    const problems = isStarted()
      ? channels.map((c) => c.health?.() ?? null).filter((p): p is string => p !== null)
      : ['starting'];
    // Tool servers are detail, not health: a failing MCP server never makes the bot unhealthy.
    const mcp = core
      .toolSources()
      .filter((s) => s.name.startsWith('mcp:'))
      .map((s) => formatSourceStatus(s));
    const detail = mcp.length ? `${mcp.join('\n')}\n` : '';
    // Which work this instance holds (several instances over one database): one line per lease.
    const held = [...core.leases.list(), ...core.presenter.heldClaims()];
    const leases = held.map((l) => `lease ${l.name} token ${l.token}\n`);
    const body = `${problems.length ? `unhealthy: ${problems.join('; ')}` : 'ok'}\n${detail}${leases.join('')}`;
    // The header tells `switchboard doctor` on this machine that the port is taken by switchboard itself.
    res.writeHead(problems.length ? 503 : 200, { 'content-type': 'text/plain', [INSTANCE_HEADER]: '1' }).end(body);
  });
  http.route('/metrics', async (req, res) => {
    const refused = metricsRefusal(req, core.config.http.api_token);
    if (refused) {
      res.writeHead(refused.status, { 'content-type': 'text/plain', ...refused.headers }).end(refused.message);
      return;
    }
    const text = await core.metrics.registry.metrics();
    res.writeHead(200, { 'content-type': core.metrics.registry.contentType }).end(text);
  });
}

/**
 * Say at start-up when shell commands are not in bubblewrap (they can read what switchboard can),
 * when their network is the host's or less than configured, and when a limit is not enforced. The
 * network is probed in the background (it also readies the first command's). `background`: the
 * `bwrap` and `prlimit` probes run as child processes without blocking the event loop, and the
 * warnings follow once they answered — a server calls it once the channels have started, and
 * nothing before the first poll needs them (a command's own preparation probes synchronously,
 * once per process, if it comes first).
 */
async function warnWithoutSandbox(config: Config, log: Logger, background = false): Promise<void> {
  if (background && config.tools.bash.sandbox !== 'off')
    await Promise.all([probeBwrapInBackground(), probePrlimitInBackground()]);
  const sandbox = sandboxStatus(config);
  if (sandbox.mode !== 'bwrap') log.warn({ sandbox: sandbox.setting }, `shell sandbox: ${sandbox.detail}`);
  if (sandbox.mode === null) return;
  const inBwrap = sandbox.mode === 'bwrap';
  for (const unbound of limitPlan(config, inBwrap).unbound) log.warn(`shell limits: ${unbound}`);
  void networkStatus(config, inBwrap).then((net) => {
    if (net.warn) log.warn({ network: net.setting }, `shell network: ${net.detail}`);
  });
}

/**
 * Start every configured channel and the web chat with the HTTP server; `terminal`: the console
 * chat on the same core too.
 * @returns null when there is nothing to serve (no platform token, the web chat turned off).
 */
export async function startServer(
  config: Config,
  log: Logger,
  terminal?: TerminalOptions,
  /** Called once the port is bound, before the channels start (the operator's login link goes first). */
  onListening?: (port: number, signIn: SignInChannel | undefined) => Promise<void>,
  /**
   * `demo`: the model is the built-in scripted one (`start --demo`); channels that can show it say
   * so. `groupCommit`: a SQLite store commits in groups (`store/group-commit.ts`), for a process
   * whose only connection to the file is this one (`switchboard start`).
   */
  options: { demo?: boolean; groupCommit?: boolean } = {},
): Promise<App | null> {
  const kinds = configuredKinds(config);
  if (kinds.length === 0) return null;
  const core = await openCore(config, log, options.groupCommit);
  const http = new HttpServer(log.child({ part: 'http' }));
  const channels: Channel[] = [];
  let signIn: SignInChannel | undefined;
  try {
    // Each platform SDK is loaded only when its channel is configured (start-up time and memory).
    const built = {
      config,
      http,
      db: core.db,
      log,
      paths: core.paths,
      subscribe: core.subscribe.bind(core),
      demo: options.demo === true,
    };
    for (const kind of kinds) if (kind.create) channels.push(await kind.create(built));
    signIn = signInOf(channels);
    for (const ch of channels) core.addChannel(ch);
    if (terminal) core.addChannel(await terminalChannel(terminal));
    let started = false;
    addOpsRoutes(http, core, channels, () => started);
    const jobs = JobService.of(core);
    if (jobs) http.route('/api/notify', notifyRoute(jobs));
    const port = await http.listen(config.http.port, config.http.host);
    await onListening?.(port, signIn);
    await core.start();
    started = true;
    void warnWithoutSandbox(config, log, true).catch((err: unknown) =>
      log.error({ err }, 'shell sandbox: the start-up probes failed'),
    );
    log.info({ port, channels: channels.map((c) => c.name) }, 'switchboard started');
    return {
      core,
      http,
      port,
      ...(signIn ? { signIn } : {}),
      async close() {
        // Open event streams would hold the server's close until their clients go.
        for (const ch of channels) ch.beforeHttpClose?.();
        await http.close();
        await core.close();
      },
    };
  } catch (err) {
    await http.close().catch(() => {});
    await core.close().catch(() => {});
    throw err;
  }
}

/** The terminal chat, opened by the registered channel that is the local operator's terminal. */
async function terminalChannel(options: TerminalOptions): Promise<Channel> {
  const kind = channelKinds.find((k) => k.terminal);
  if (!kind?.terminal) throw new Error('no registered channel opens a terminal chat');
  return kind.terminal({
    jsonl: options.jsonl,
    conversation: options.conversation,
    input: options.input as import('node:stream').Readable,
    output: options.output as import('node:stream').Writable,
    onEnd: options.onEnd,
    ...(options.alsoStops ? { alsoStops: options.alsoStops } : {}),
  });
}

/** Start the terminal chat (interactive or JSONL) over the same core. */
export async function startTerminal(config: Config, log: Logger, options: TerminalOptions): Promise<App> {
  // The terminal chat shows the warnings before its first prompt; it has no poll to hurry.
  await warnWithoutSandbox(config, log);
  const channel = await terminalChannel(options);
  const core = await openCore(config, log);
  core.addChannel(channel);
  await core.start();
  log.info({ conversation: options.conversation, jsonl: options.jsonl }, 'terminal chat started');
  return {
    core,
    http: null,
    port: null,
    close: () => core.close(),
  };
}
