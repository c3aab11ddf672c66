/**
 * Task-only tools (`execution.taskSupport: "required"`): the call creates a task, its status
 * messages are shown as progress, the result is fetched when it ends; a stopped call cancels the
 * task on the server, so it does not run on unseen.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from 'pino';
import { errorMessage } from '../errors.js';
import { UNBOUNDED_MS } from './timing.js';

/** A task-only tool: create the task, follow its status, fetch its result; stop cancels the task. */
export async function callAsTask(
  client: Client,
  who: { server: string; log: Logger },
  tool: string,
  args: Record<string, unknown>,
  signal: AbortSignal,
  onProgress?: (progress: number, total: number | undefined, message?: string) => void,
): Promise<CallToolResult> {
  let taskId: string | undefined;
  let steps = 0;
  try {
    const stream = client.experimental.tasks.callToolStream({ name: tool, arguments: args }, undefined, {
      signal,
      task: {},
      timeout: UNBOUNDED_MS,
      onprogress: (p) => onProgress?.(p.progress, p.total, p.message),
    });
    for await (const message of stream) {
      if (message.type === 'taskCreated') taskId = message.task.taskId;
      else if (message.type === 'taskStatus') {
        taskId = message.task.taskId;
        onProgress?.(++steps, undefined, message.task.statusMessage ?? message.task.status);
      } else if (message.type === 'result') return message.result as CallToolResult;
      else throw message.error;
    }
    throw new Error(`task ${taskId ?? '(not created)'} ended without a result`);
  } finally {
    if (signal.aborted && taskId) {
      // Stop reached us between polls or during one: the task itself must end too.
      await client.experimental.tasks.cancelTask(taskId, { timeout: 5000 }).catch((err) => {
        who.log.warn({ server: who.server, taskId, err: errorMessage(err) }, 'MCP task cancel failed');
      });
    }
  }
}
