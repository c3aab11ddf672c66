/**
 * Background commands (`bash {background: true}`): a registry of running process groups, scoped
 * to the conversation that started them, listed and stopped with `bash_processes`, and all
 * reaped by {@link shutdownBackgroundProcesses} when switchboard closes (with the conversations'
 * network namespaces and the commands' cgroups).
 */
import { closeCgroups } from './cgroups.js';
import { startCommand, type RunningCommand } from './processes.js';
import type { Launch } from './sandbox.js';
import { closeNamespaces } from './sandbox-network.js';

/** Most background processes running at once (all conversations). */
export const MAX_BACKGROUND = 8;
/** Finished entries kept for `list` / `output`, per process registry. */
const KEEP_FINISHED = 20;

/** One background command. */
export interface BackgroundProcess {
  id: string;
  conversationId: string;
  command: string;
  workdir: string;
  pid: number;
  startedAt: number;
  run: RunningCommand;
  exit?: { code: number | null; signal: NodeJS.Signals | null; endedAt: number; stopped: boolean };
}

const registry = new Map<string, BackgroundProcess>();
let nextId = 1;

/** Options of {@link startBackground}. */
export interface BackgroundStart {
  conversationId: string;
  command: string;
  /** What to spawn for the command (see `sandbox.ts`). */
  launch: Launch;
  workdir: string;
  maxOutputBytes: number;
  /** Called once when the process ends (for the terminal audit record). */
  onExit?(p: BackgroundProcess): void;
}

/** Start a background command, or explain why not. */
export function startBackground(o: BackgroundStart): BackgroundProcess | string {
  const running = [...registry.values()].filter((p) => !p.exit).length;
  if (running >= MAX_BACKGROUND)
    return `too many background processes running (${running}); stop one with bash_processes first`;
  const run = startCommand({ launch: o.launch, cwd: o.workdir, maxOutputBytes: o.maxOutputBytes });
  const p: BackgroundProcess = {
    id: `bg${nextId++}`,
    conversationId: o.conversationId,
    command: o.command,
    workdir: o.workdir,
    pid: run.pid,
    startedAt: Date.now(),
    run,
  };
  registry.set(p.id, p);
  void run.done.then(({ code, signal }) => {
    p.exit = { code, signal, endedAt: Date.now(), stopped: p.exit?.stopped ?? false };
    o.onExit?.(p);
    prune();
  });
  return p;
}

function prune(): void {
  const finished = [...registry.values()].filter((p) => p.exit);
  for (const p of finished.slice(0, Math.max(0, finished.length - KEEP_FINISHED))) registry.delete(p.id);
}

/** Background processes of one conversation, oldest first. */
export function listBackground(conversationId: string): BackgroundProcess[] {
  return [...registry.values()].filter((p) => p.conversationId === conversationId);
}

/** One background process of a conversation. */
export function getBackground(conversationId: string, id: string): BackgroundProcess | undefined {
  const p = registry.get(id);
  return p && p.conversationId === conversationId ? p : undefined;
}

/** Stop a background process (its whole group). */
export async function stopBackground(p: BackgroundProcess): Promise<void> {
  if (p.exit) return;
  p.exit = { code: null, signal: null, endedAt: Date.now(), stopped: true };
  await p.run.kill();
}

/**
 * Kill every background process group and wait until they are gone, then close the
 * conversations' network namespaces and remove the commands' cgroups. The core calls this on close.
 */
export async function shutdownBackgroundProcesses(): Promise<void> {
  await Promise.all([...registry.values()].filter((p) => !p.exit).map((p) => stopBackground(p)));
  await closeNamespaces();
  await closeCgroups();
}
