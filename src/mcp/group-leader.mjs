// Runs one stdio MCP server in a process group of its own and makes the whole group die with
// switchboard. switchboard talks to the server through this process's stdin/stdout, which the
// server inherits; this process only watches: its parent going away (even by SIGKILL, seen as a
// change of parent pid), SIGTERM/SIGHUP from switchboard, or the server exiting.
// Usage: node group-leader.mjs '<json: [command, ...args]>'
import { spawn } from 'node:child_process';

const [command, ...args] = JSON.parse(process.argv[2] ?? '[]');
const parent = process.ppid;
const child = spawn(command, args, { stdio: 'inherit', detached: true });
let stopping = false;

function killGroup(signal) {
  if (!child.pid) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // the group is already gone
  }
}

function stop() {
  if (stopping) return;
  stopping = true;
  killGroup('SIGTERM');
  setTimeout(() => {
    killGroup('SIGKILL');
    process.exit(1);
  }, 2000).unref();
}

child.on('error', (err) => {
  process.stderr.write(`cannot start ${command}: ${err.message}\n`);
  process.exit(127);
});
child.on('exit', (code, signal) => {
  // Whatever the server left behind in its group goes with it.
  killGroup('SIGKILL');
  process.exit(code ?? (signal ? 1 : 0));
});
process.on('SIGTERM', stop);
process.on('SIGHUP', stop);
// Ctrl-C reaches the whole terminal group; switchboard decides when its servers stop.
process.on('SIGINT', () => {});
setInterval(() => {
  if (process.ppid !== parent) stop();
}, 250);
