/**
 * Runs one shell command the way the bash tool does (the compiled sandbox: bubblewrap, the
 * conversation's network namespace, the limits) and prints one JSON line with what happened. The
 * limits test starts it as an unprivileged user, as the Docker image runs switchboard, where
 * RLIMIT_NPROC is what binds processes when no cgroup can be made.
 *
 *   node run-command.mjs WORKSPACE NETWORK MAX_PROCESSES COMMAND
 */
import path from 'node:path';

const dist = path.resolve(import.meta.dirname, '../../dist/src');
const { configSchema } = await import(`${dist}/config.js`);
const { prepareCommand } = await import(`${dist}/tools/sandbox.js`);
const { startCommand } = await import(`${dist}/tools/processes.js`);
const { limitPlan } = await import(`${dist}/tools/sandbox-limits.js`);
const { shutdownBackgroundProcesses } = await import(`${dist}/tools/background.js`);

const [workspace, network, maxProcesses, command] = process.argv.slice(2);
const config = configSchema.parse({
  workspace: { root: workspace },
  tools: { bash: { sandbox: 'bwrap', network, max_processes: Number(maxProcesses) } },
});
const launch = await prepareCommand(config, command, workspace, 'as-user');
if (typeof launch === 'string') {
  console.log(JSON.stringify({ refused: launch }));
  process.exit(0);
}
const run = startCommand({ launch, cwd: workspace, maxOutputBytes: 100_000 });
const timer = setTimeout(() => void run.kill(), 30_000);
const done = await run.done;
clearTimeout(timer);
await run.kill();
await launch.release();
await shutdownBackgroundProcesses();
console.log(
  JSON.stringify({
    uid: process.getuid(),
    layers: limitPlan(config, true).layers,
    exit: done,
    output: run.output.text(),
  }),
);
