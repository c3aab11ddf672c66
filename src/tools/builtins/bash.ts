/**
 * `bash {command, timeout?, workdir?, background?}`: run a shell command in its own process
 * group inside the workspace, in the shell sandbox (`sandbox.ts`: clean environment and limits,
 * and with bubblewrap its own PID namespace with switchboard's files hidden, in its
 * conversation's network namespace). Timeout 1–600 s (default `tools.bash_default_timeout_seconds`),
 * then the whole group is killed. Output is streamed line by line as `tool_output`, secrets are
 * redacted, and the result keeps the head and tail (`tools.bash_max_output_bytes`). A short
 * blocklist refuses catastrophic commands. Audited as `shell_exec`.
 */
import path from 'node:path';
import { z } from 'zod';
import { startBackground } from '../background.js';
import { defineTool } from '../define.js';
import { groupLingers, startCommand } from '../processes.js';
import { configSecrets, LineRedactor, redactSecrets } from '../redact.js';
import { type PreparedCommand, prepareCommand } from '../sandbox.js';
import type { ToolContext, ToolResult } from '../types.js';
import { blockedReason } from './bash-guard.js';
import { openEntry, reachParent } from '../confined/open.js';
import { confinedFailure, fail, formatBytes, shownPath } from './common.js';

const schema = z
  .object({
    command: z.string().min(1).max(20_000),
    timeout: z.number().int().min(1).max(600).optional().describe('seconds, default 120'),
    workdir: z.string().min(1).optional(),
    background: z
      .boolean()
      .optional()
      .describe('Start and return at once with a process id; list, read and stop it with bash_processes.'),
  })
  .strict();

/** The `bash` tool. */
export const bashTool = defineTool({
  name: 'bash',
  description:
    'Run a bash command in the workspace; returns output and exit status. Prefer the file tools to cat/grep/sed. ' +
    'Servers and watchers: background, then bash_processes.',
  schema,
  meta: {
    category: 'exec',
    defaultApproval: 'require',
    primaryKey: 'command',
    subAgent: true,
    source: 'builtin',
    // A grant covers the command where and how the card says it runs (not the timeout, which only
    // bounds it); grants recorded before covered the command in any folder and mode.
    grantArgs: ['command', 'workdir', 'background'],
    grantArgDefaults: { workdir: '.', background: false },
    legacyGrantArgs: ['command'],
  },
  describe: (a) => `bash ${a.command}`,
  // Where and how first, on a line of its own, then the command exactly: a line of the command
  // cannot pass for the workdir or the mode, which the first line always states.
  preview: (a) => `${runLine(a)}\n$ ${a.command}`,
  async execute(args, ctx): Promise<ToolResult> {
    const blocked = blockedReason(args.command);
    if (blocked) return fail(`refused: ${blocked}`);
    // The folder is found by the confined walk; the command gets where it really is (and inside
    // the sandbox, the kernel decides what that path reaches).
    let workdir: string;
    try {
      const opened = await openEntry(ctx.paths, args.workdir ?? '.', 'write');
      await opened.handle.close();
      workdir = opened.abs;
      if (!opened.stat.isDirectory()) return fail(`${ctx.paths.display(workdir)}: not a folder`);
    } catch (err) {
      return confinedFailure(shownPath(ctx, args.workdir ?? '.', 'write'), err);
    }
    const view = ctx.paths.sandboxView();
    // The conversation's own upload folders are shown inside the covered uploads folder: they must exist.
    // Made through the confined walk (the folders of a name in them): an `uploads` swapped for a
    // symlink cannot lead them elsewhere.
    for (const dir of view?.show ?? []) {
      const made = await reachParent(ctx.paths, path.join(dir, 'entry'), 'write', { missing: 'create' }).catch(
        () => null,
      );
      await made?.dir.close();
    }
    const launch = await prepareCommand(ctx.config, args.command, workdir, ctx.conversationId, view);
    if (typeof launch === 'string') return fail(`refused: ${launch}`);
    if (args.background) return background(args.command, launch, workdir, ctx);
    return foreground(
      args.command,
      launch,
      workdir,
      args.timeout ?? ctx.config.tools.bash_default_timeout_seconds,
      ctx,
    );
  },
});

/** The first line of a bash card: the folder, foreground or background, and the timeout. */
function runLine(a: { workdir?: string; background?: boolean; timeout?: number }): string {
  const mode = a.background
    ? 'in the background'
    : a.timeout
      ? `in the foreground, timeout ${a.timeout} s`
      : 'in the foreground, default timeout';
  return `workdir ${a.workdir ?? '.'} · ${mode}`;
}

async function foreground(
  command: string,
  launch: PreparedCommand,
  workdir: string,
  timeoutS: number,
  ctx: ToolContext,
): Promise<ToolResult> {
  const secrets = configSecrets(ctx.config);
  const redactor = new LineRedactor(secrets);
  const maxBytes = ctx.config.tools.bash_max_output_bytes;
  let streamed = 0;
  let streamCapped = false;
  const started = Date.now();
  const run = startCommand({
    launch,
    cwd: workdir,
    maxOutputBytes: maxBytes,
    onLines(text) {
      for (const raw of text.split('\n')) {
        if (streamCapped) return;
        const line = redactor.line(raw);
        if (line === null) continue;
        streamed += line.length + 1;
        if (streamed > maxBytes) {
          streamCapped = true;
          ctx.emitOutput(`[live output stopped after ${formatBytes(maxBytes)}; the result keeps head and tail]`);
          return;
        }
        ctx.emitOutput(line);
      }
    },
  });
  let timedOut = false;
  let cancelled = false;
  const timer = setTimeout(() => {
    timedOut = true;
    void run.kill();
  }, timeoutS * 1000);
  const onAbort = () => {
    cancelled = true;
    void run.kill();
  };
  if (ctx.signal.aborted) onAbort();
  else ctx.signal.addEventListener('abort', onAbort, { once: true });
  const { code, signal } = await run.done;
  clearTimeout(timer);
  ctx.signal.removeEventListener('abort', onAbort);
  // The leader is gone; nothing it started may linger in its group (servers belong in
  // `background: true`, which keeps them listed and stoppable).
  const leftovers = !timedOut && !cancelled && (await groupLingers(run.pid));
  if (timedOut || cancelled || leftovers) await run.kill();
  const limited = launch.limitNotes();
  await launch.release();
  const elapsedMs = Date.now() - started;
  await ctx.audit('shell_exec', {
    command,
    workdir: ctx.paths.display(workdir),
    pid: run.pid,
    exit_code: code,
    signal,
    elapsed_ms: elapsedMs,
    timed_out: timedOut,
    cancelled,
    background: false,
    output_bytes: run.output.total,
    ...(limited.length ? { limits_hit: limited } : {}),
  });
  const text = redactSecrets(run.output.text(), secrets).replace(/\n$/, '');
  const secs = (elapsedMs / 1000).toFixed(1);
  let status: string;
  if (timedOut) status = `[timed out after ${timeoutS} s; the process group was killed]`;
  else if (cancelled) status = `[stopped after ${secs} s; the process group was killed]`;
  else if (signal) status = `[killed by ${signal} after ${secs} s]`;
  else status = `[exit status ${code}, ${secs} s]`;
  if (leftovers)
    status += '\n[processes the command left running were stopped; use background: true for long-running processes]';
  for (const note of limited) status += `\n[${note}]`;
  const body = text.length > 0 ? `${text}\n${status}` : `(no output)\n${status}`;
  const ok = !timedOut && !cancelled && code === 0;
  const summary = timedOut ? `timed out after ${timeoutS} s` : cancelled ? 'stopped' : `exit ${code ?? signal}`;
  return { output: body, summary, status: ok ? 'done' : 'failed' };
}

async function background(
  command: string,
  launch: PreparedCommand,
  workdir: string,
  ctx: ToolContext,
): Promise<ToolResult> {
  const p = startBackground({
    conversationId: ctx.conversationId,
    command,
    launch,
    workdir,
    maxOutputBytes: ctx.config.tools.bash_max_output_bytes,
    onExit(done) {
      const limited = launch.limitNotes();
      void launch.release();
      void ctx
        .audit('shell_exec', {
          command,
          workdir: ctx.paths.display(workdir),
          pid: done.pid,
          exit_code: done.exit?.code ?? null,
          signal: done.exit?.signal ?? null,
          elapsed_ms: (done.exit?.endedAt ?? Date.now()) - done.startedAt,
          cancelled: done.exit?.stopped ?? false,
          background: true,
          state: 'finished',
          output_bytes: done.run.output.total,
          ...(limited.length ? { limits_hit: limited } : {}),
        })
        .catch((err: unknown) => ctx.log.warn({ err }, 'audit of a finished background process failed'));
    },
  });
  if (typeof p === 'string') {
    await launch.release();
    return fail(p);
  }
  await ctx.audit('shell_exec', {
    command,
    workdir: ctx.paths.display(workdir),
    pid: p.pid,
    background: true,
    state: 'started',
    id: p.id,
  });
  return {
    output:
      `Started background process ${p.id} (pid ${p.pid}): ${command}\nUse bash_processes {action:"output", ` +
      `id:"${p.id}"} to read its output, {action:"stop"} to stop it.`,
    summary: `started ${p.id}`,
  };
}
