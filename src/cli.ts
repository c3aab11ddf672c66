/**
 * The `switchboard` command line: start | chat [--jsonl] [--conversation NAME] | migrate |
 * doctor | pair list | pair approve CODE | jobs … | notify …. Exit codes: 0 ok, 1 runtime failure, 2 bad
 * configuration or usage (one line naming the key or flag, no stack trace).
 */
import { mkdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import {
  ConfigError,
  configSchema,
  inspectConfig,
  loadConfig,
  resolveConfigPath,
  databaseTarget,
  type Config,
} from './config.js';
import { AccessControl } from './core/access.js';
import { errorMessage } from './errors.js';
import { createLogger } from './log.js';
import type { App } from './main.js';
import { migrateToLatest, openStore } from './store/db.js';
import { allRules, deleteRule, getRule } from './store/repos/approvals.js';
import { listPendingCodes } from './store/repos/pairing.js';
import { ruleLine } from './core/rules.js';
import { RULES_HEADER } from './core/rules-command.js';
import { COMMAND_HELP } from './cli-help.js';
import { argsErrorText } from './cli-usage.js';
import { modelKeyMissing } from './core/model-check.js';
import { MODEL_NOT_CONFIGURED } from './delivery/notices.js';

/** `a`, `a or b`, `a, b or c`. */
function orList(items: readonly string[]): string {
  return items.length < 2 ? items.join('') : `${items.slice(0, -1).join(', ')} or ${items.at(-1)}`;
}

/** A channel's name as a sentence writes it (`telegram` → `Telegram`). */
function capitalised(name: string): string {
  return name.charAt(0).toUpperCase() + name.slice(1);
}

const HELP = `switchboard — a tool-using LLM agent in your chat platforms and a web chat

Usage: switchboard <command> [--config PATH]

Commands:
  start [--demo]                run every configured channel and the web chat; prints a
                                login link for the local operator (no platform token + a terminal: the
                                console chat as well); --demo: on a built-in scripted model, no key needed
  chat [--conversation NAME]    terminal chat with the same core (approvals as prompts)
  chat --jsonl [--conversation NAME]
                                the same over JSON lines on stdin/stdout (protocol: docs/commands.md)
  chat --demo                   the terminal chat on a built-in scripted model (no endpoint or key)
  migrate                       apply database migrations and exit
  doctor                        check config, database, model endpoint and platform tokens
  pair list                     pending pairing codes: CODE  channel  user-id  display-name  expires-at
  pair approve CODE             let the user with this pairing code talk to the bot
  jobs list                     scheduled jobs: ID  state  next-run  last-outcome  name  schedule
  jobs add (--cron EXPR | --at TIME) [--tz ZONE] [--to CHANNEL:CHAT] [--name NAME] PROMPT
                                schedule a prompt without the model (as the schedule_job tool does)
  jobs run|pause|resume|delete ID
                                run a job now, pause, resume or delete it
  notify [--to CHANNEL:CHAT] [--title T] TEXT|-
                                send a notification through the running switchboard (needs
                                SWITCHBOARD_API_TOKEN); TEXT - reads stdin; no --to: the admins' home chats
  rules list                    stored approval rules: ID  tool  path  action  scope  granted-by  created-at
  rules revoke ID               delete a stored rule (e.g. an "always" grant)
  mcp list                      connect to each configured MCP server once: state and tools
  healthcheck                   exit 0 when the switchboard running here answers /healthz on the
                                configured port (environment or config file), else 1 (Docker's HEALTHCHECK)
  web link [--user NAME] [--admin] [--ttl MINUTES]
                                a one-time login link to the web chat (default user "operator", 15 min)
  web sessions                  live web sessions: ID  user  admin  created-at  last-seen
  web revoke ID|USER            end a web session (or every session of a user)

Options:
  --config PATH                 TOML config (else $SWITCHBOARD_CONFIG, else ./switchboard.toml)
  --mcp-config PATH             {"mcpServers": ...} JSON file (else $SWITCHBOARD_MCP_CONFIG)
  -h, --help, help              this help; COMMAND --help: that command's usage and examples
  -v, --version, version        the version
`;

class UsageError extends Error {}

/** Print a command's outcome and set the exit code. */
function report(outcome: { code: number; stdout?: string; stderr?: string }): void {
  if (outcome.stdout) process.stdout.write(outcome.stdout);
  if (outcome.stderr) process.stderr.write(`${outcome.stderr}\n`);
  process.exitCode = outcome.code;
}

/** The version in package.json: one level up from `src/`, two from `dist/src/`, three from `dist/bundle/src/`. */
function packageVersion(): string {
  for (const rel of ['../package.json', '../../package.json', '../../../package.json']) {
    try {
      const pkg = JSON.parse(readFileSync(new URL(rel, import.meta.url), 'utf8')) as { name?: string; version: string };
      if (pkg.name === 'switchboard') return pkg.version;
    } catch {
      // not at this level; try the next one up
    }
  }
  throw new Error('package.json not found next to the sources');
}

function fail(code: number, message: string): never {
  process.stderr.write(`${message}\n`);
  process.exit(code);
}

let mcpConfigFlag: string | undefined;

function load(configFlag: string | undefined): Config {
  return loadConfig({ path: resolveConfigPath(configFlag, process.env), mcpConfigPath: mcpConfigFlag });
}

/**
 * Stop on SIGTERM/SIGINT: stop taking updates, let turns reach a safe point, exit 0 within 10 s.
 * `app` may still be starting (its channels already take input): the stop waits for it.
 */
function exitOnSignals(app: App | Promise<App | null | undefined>, log: ReturnType<typeof createLogger>): void {
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'shutting down');
    setTimeout(() => process.exit(0), 9_000).unref();
    Promise.resolve(app)
      .then((a) => a?.close())
      .then(
        () => process.exit(0),
        (err) => {
          log.error({ err }, 'shutdown failed');
          process.exit(0);
        },
      );
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
}

/** Where the interactive console writes its log: beside the SQLite file (PostgreSQL: the temp folder). */
function consoleLogFile(config: Config): string {
  const target = databaseTarget(config.store.database_url);
  if (target.kind === 'postgres' || target.file === ':memory:') return path.join(os.tmpdir(), 'switchboard.log');
  return path.join(path.dirname(path.resolve(target.file)), 'switchboard.log');
}

/** The workspace the tools work in, made at start (doctor only checks that it can be). */
function ensureWorkspace(config: Config): void {
  try {
    mkdirSync(config.workspace.root, { recursive: true });
  } catch (err) {
    throw new Error(`cannot create the workspace ${config.workspace.root}: ${errorMessage(err)}`);
  }
}

/** What `start --demo` prints first: the answers are a script, and what to try in the web chat. */
const DEMO_START_LINE =
  'DEMO: every chat answers from a small scripted model built into switchboard, not from an LLM ' +
  '(labelled [demo]). In the web chat say "write a file" or "ask me something".';

/** The built-in scripted model on loopback in place of the configured endpoint (`--demo`): no key, no account. */
async function onDemoModel(config: Config): Promise<Config> {
  // The real client and engine against a scripted endpoint: approvals and questions run as with a model.
  const { startDemoModel, DEMO_MODEL } = await import('./demo/model.js');
  const demo = await startDemoModel();
  return { ...config, llm: { ...config.llm, base_url: demo.url, api_key: 'demo', model: DEMO_MODEL } };
}

/** With no model configured, say so on the terminal before anything else (what to set, or the demo). */
function warnWithoutModel(config: Config): void {
  if (modelKeyMissing(config)) process.stderr.write(`${MODEL_NOT_CONFIGURED}\n`);
}

async function chat(config: Config, jsonl: boolean, conversation: string): Promise<void> {
  ensureWorkspace(config);
  // JSONL: logs on stderr (stdout is the protocol). Interactive: logs in a file, never in the chat.
  const logFile = jsonl ? undefined : consoleLogFile(config);
  const log = createLogger(config.log.level, logFile);
  if (logFile) process.stderr.write(`(logs: ${logFile})\n`);
  // The channel takes input while the core is still starting (recovery, tool servers): input
  // that ends, or a signal, in that window waits for the start instead of cutting it short.
  let started: (app: App) => void = () => {};
  let failed: (err: unknown) => void = () => {};
  const app = new Promise<App>((resolve, reject) => {
    started = resolve;
    failed = reject;
  });
  let ending = false;
  const end = () => {
    if (ending) return;
    ending = true;
    void (async () => {
      const a = await app.catch(() => null);
      if (a) {
        await a.core.idle();
        await a.close();
      }
      process.exit(0);
    })();
  };
  exitOnSignals(app, log);
  const { startTerminal } = await import('./main.js');
  startTerminal(config, log, { jsonl, conversation, input: process.stdin, output: process.stdout, onEnd: end }).then(
    started,
    failed,
  );
  await app;
}

async function main(argv: string[]): Promise<void> {
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        config: { type: 'string' },
        'mcp-config': { type: 'string' },
        jsonl: { type: 'boolean' },
        conversation: { type: 'string' },
        to: { type: 'string' },
        cron: { type: 'string' },
        at: { type: 'string' },
        tz: { type: 'string' },
        name: { type: 'string' },
        demo: { type: 'boolean' },
        title: { type: 'string' },
        user: { type: 'string' },
        admin: { type: 'boolean' },
        ttl: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
        version: { type: 'boolean', short: 'v' },
      },
    });
  } catch (err) {
    throw new UsageError(argsErrorText(err, argv, Object.keys(COMMAND_HELP)));
  }
  const { values, positionals } = parsed;
  const [command, sub, arg] = positionals;
  if (values.version || command === 'version') {
    process.stdout.write(`switchboard ${packageVersion()}\n`);
    return;
  }
  if (values.help || !command || command === 'help') {
    const topic = command === 'help' ? sub : command;
    process.stdout.write((topic && COMMAND_HELP[topic]) || HELP);
    return;
  }
  const configFlag = values.config as string | undefined;
  mcpConfigFlag = values['mcp-config'] as string | undefined;
  switch (command) {
    case 'start': {
      let config = load(configFlag);
      if (values.demo) {
        config = await onDemoModel(config);
        process.stderr.write(`${DEMO_START_LINE}\n`);
      }
      ensureWorkspace(config);
      const [{ startServer, hasPlatform }, { channelKinds }] = await Promise.all([
        import('./main.js'),
        import('./channels/registry.js'),
      ]);
      const platforms = hasPlatform(config);
      // The chat platforms this build knows (neither the terminal nor the signed-in web chat).
      const platformKinds = channelKinds.filter((k) => !k.local && !k.signedIn);
      const noToken = `No ${orList(platformKinds.map((k) => capitalised(k.name)))} token configured`;
      if (!platforms && !config.web.enabled) {
        // Without a terminal there is nobody to chat with: a forgotten token in a container must be
        // a clear failure, not a silent exit 0 or a restart loop.
        if (!process.stdin.isTTY) {
          throw new UsageError(
            `start: no channel configured (${orList(platformKinds.flatMap((k) => k.howToEnable ?? []))}, or set ` +
              `web.enabled = true) and no terminal for the console chat; for scripts use \`switchboard chat --jsonl\``,
          );
        }
        process.stderr.write(`${noToken} and the web chat is off (web.enabled = false); starting the console chat.\n`);
        warnWithoutModel(config);
        await chat(config, false, 'console');
        return;
      }
      // The embedded default with a terminal: the console chat beside the web chat, logs in a file.
      const terminal = !platforms && process.stdin.isTTY === true;
      const logFile = terminal ? consoleLogFile(config) : undefined;
      const log = createLogger(config.log.level, logFile);
      if (!platforms)
        process.stderr.write(
          `${noToken}: serving the web chat${terminal ? ' and the console chat' : ''}.${logFile ? ` (logs: ${logFile})` : ''}\n`,
        );
      // The log says it too, but with a terminal the log is in a file nobody reads yet.
      if (logFile) warnWithoutModel(config);
      const end = () => {
        void app.then(async (a) => {
          await a?.close();
          process.exit(0);
        });
      };
      // The operator's login link is printed once the port is bound, before the console chat opens.
      const announce = async (
        port: number,
        web: { loginLink(port: number, user: string, admin: boolean): Promise<{ url: string }> } | undefined,
      ) => {
        if (!web) return;
        const link = await web.loginLink(port, 'operator', true);
        process.stderr.write(
          `Web chat: ${link.url}\n  (a one-time login link for the local operator, an admin; valid ` +
            `${config.web.link_ttl_minutes} minutes; \`switchboard web link\` makes more)\n`,
        );
      };
      // /quit in this console ends the whole process: the console says so (see ConsoleOptions.alsoStops).
      const io = terminal
        ? {
            jsonl: false,
            conversation: 'console',
            input: process.stdin,
            output: process.stdout,
            onEnd: end,
            ...(config.web.enabled ? { alsoStops: 'the web chat' } : {}),
          }
        : undefined;
      // This process's only connection to the store is the core's: it commits in groups.
      const app = startServer(config, log, io, announce, { demo: Boolean(values.demo), groupCommit: true });
      // At once, not once started: a SIGTERM right after "switchboard started" is logged must
      // still stop it cleanly (with no handler yet, the default action killed the process).
      exitOnSignals(app, log);
      await app;
      return;
    }
    case 'chat': {
      let config = load(configFlag);
      const name = (values.conversation as string | undefined) ?? (values.demo ? 'demo' : 'console');
      if (!/^[\w.-]{1,64}$/.test(name))
        throw new UsageError('usage: --conversation takes 1-64 letters, digits, ".", "_" or "-"');
      if (values.demo) {
        config = await onDemoModel(config);
        process.stderr.write(
          'DEMO: the answers come from a small scripted model built into switchboard, not from an LLM. Say "write a file" or "ask me something".\n',
        );
      } else if (!values.jsonl) warnWithoutModel(config);
      await chat(config, Boolean(values.jsonl), name);
      return;
    }
    case 'migrate': {
      const config = load(configFlag);
      const db = openStore(config.store);
      try {
        const applied = await migrateToLatest(db);
        process.stdout.write(applied.length ? `applied: ${applied.join(', ')}\n` : 'database is up to date\n');
      } finally {
        await db.destroy();
      }
      return;
    }
    case 'doctor': {
      // Every check runs even with a faulty configuration: each bad key is reported and falls
      // back to its default for the remaining checks.
      const { config, problems } = inspectConfig({
        path: resolveConfigPath(configFlag, process.env),
        mcpConfigPath: mcpConfigFlag,
      });
      const { runDoctor } = await import('./doctor.js');
      const results = await runDoctor(config ?? configSchema.parse({}), createLogger('silent'), problems);
      for (const r of results)
        process.stdout.write(`${r.ok ? 'ok  ' : r.warnOnly ? 'warn' : 'FAIL'}  ${r.name}: ${r.detail}\n`);
      if (problems.length) process.exit(2);
      if (results.some((r) => !r.ok && !r.warnOnly)) process.exit(1);
      return;
    }
    case 'pair': {
      const config = load(configFlag);
      const db = openStore(config.store);
      try {
        await migrateToLatest(db);
        if (sub === 'list') {
          const codes = await listPendingCodes(db, Date.now());
          if (codes.length === 0) process.stdout.write('no pending pairing codes\n');
          for (const c of codes) {
            process.stdout.write(
              `${c.code}  ${c.channel}  ${c.user_id}  ${c.display_name}  ${new Date(c.expires_at).toISOString()}\n`,
            );
          }
          return;
        }
        if (sub === 'approve') {
          if (!arg) throw new UsageError('usage: switchboard pair approve CODE');
          const { channelKinds } = await import('./channels/registry.js');
          const r = await new AccessControl(db, config, channelKinds).approvePairing(arg, 'cli');
          if (!r.ok) {
            process.stderr.write(`${r.reason}\n`);
            process.exitCode = 1;
            return;
          }
          process.stdout.write(`paired ${r.channel}:${r.userId}\n`);
          return;
        }
        throw new UsageError('usage: switchboard pair list | pair approve CODE');
      } finally {
        await db.destroy();
      }
    }
    case 'jobs': {
      if (sub === 'add') {
        const [{ jobsAdd }, { channelKinds }] = await Promise.all([
          import('./jobs/cli-add.js'),
          import('./channels/registry.js'),
        ]);
        const str = (k: string) => values[k] as string | undefined;
        report(
          await jobsAdd(
            load(configFlag),
            {
              cron: str('cron'),
              at: str('at'),
              tz: str('tz'),
              to: str('to'),
              name: str('name'),
              prompt: positionals.slice(2).join(' '),
            },
            channelKinds,
          ),
        );
        return;
      }
      const { jobsCommand } = await import('./jobs/cli.js');
      report(await jobsCommand(load(configFlag), sub, arg));
      return;
    }
    case 'notify': {
      const config = load(configFlag);
      const { notifyCommand, readStdin } = await import('./jobs/cli.js');
      const words = positionals.slice(1);
      if (words.length === 0)
        throw new UsageError('usage: switchboard notify [--to CHANNEL:CHAT] [--title TITLE] TEXT|-');
      const text = words.length === 1 && words[0] === '-' ? await readStdin() : words.join(' ');
      report(
        await notifyCommand(config, {
          to: values.to as string | undefined,
          title: values.title as string | undefined,
          text,
        }),
      );
      return;
    }
    case 'rules': {
      const config = load(configFlag);
      const db = openStore(config.store);
      try {
        await migrateToLatest(db);
        if (sub === 'list') {
          const rules = await allRules(db);
          if (!rules.length)
            process.stdout.write('no stored rules (rules from the config file are in [[approvals.rules]])\n');
          else process.stdout.write(`${RULES_HEADER}\n`);
          for (const r of rules) process.stdout.write(`${ruleLine(r)}\n`);
          return;
        }
        if (sub === 'revoke') {
          const id = Number(arg);
          if (!arg || !Number.isSafeInteger(id) || id <= 0)
            throw new UsageError('usage: switchboard rules revoke ID (a number from `rules list`)');
          const rule = await getRule(db, id);
          if (!rule || !(await deleteRule(db, id))) {
            process.stderr.write(`no rule #${id}\n`);
            process.exitCode = 1;
            return;
          }
          process.stdout.write(`revoked ${ruleLine(rule)}\n`);
          return;
        }
        throw new UsageError('usage: switchboard rules list | rules revoke ID');
      } finally {
        await db.destroy();
      }
    }
    case 'healthcheck': {
      // The port and host as start reads them (environment over config file over default).
      const config = load(configFlag);
      const host = ['0.0.0.0', '::', ''].includes(config.http.host) ? '127.0.0.1' : config.http.host;
      const url = `http://${host.includes(':') ? `[${host}]` : host}:${config.http.port}/healthz`;
      const ok = await fetch(url, { signal: AbortSignal.timeout(4_000) }).then(
        (r) => r.ok,
        () => false,
      );
      if (!ok) process.stderr.write(`unhealthy: no healthy answer from ${url}\n`);
      process.exitCode = ok ? 0 : 1;
      return;
    }
    case 'mcp': {
      if (sub !== 'list') throw new UsageError('usage: switchboard mcp list');
      const config = load(configFlag);
      const { probeServers } = await import('./mcp/index.js');
      const { formatSourceStatus } = await import('./tools/source.js');
      const statuses = await probeServers(config, createLogger('silent'));
      if (statuses.length === 0) process.stdout.write('no MCP servers configured\n');
      for (const s of statuses) process.stdout.write(`${formatSourceStatus(s, { withTools: true })}\n`);
      if (statuses.some((s) => s.state !== 'ready' && s.state !== 'disabled')) process.exitCode = 1;
      return;
    }
    default: {
      // A channel's own command line, named after it (`switchboard web link`).
      const { channelKind } = await import('./channels/registry.js');
      const cli = channelKind(command)?.cli;
      if (!cli) throw new UsageError(`usage: unknown command "${command}" (see switchboard --help)`);
      report(await cli(load(configFlag), sub, arg, values));
      return;
    }
  }
}

main(process.argv.slice(2)).catch((err: unknown) => {
  if (err instanceof ConfigError || err instanceof UsageError) fail(2, err.message);
  fail(1, `switchboard: ${errorMessage(err)}`);
});
