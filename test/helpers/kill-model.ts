/** The scripted model of the kill tests and the chaos benchmark. */
import type { ScriptedStep } from '../emulators/llm.js';

/** The model's answer to a question: long enough to stream in several chunks. */
export function answerFor(question: string): string {
  return `Answer to ${question}: ${'lorem ipsum dolor '.repeat(5).trim()}.`;
}

/** A deterministic model: answers the last user message; `slow` questions stream for ~1.5 s; `approve` asks for bash first. */
export function scriptedModel(body: { messages: Array<{ role: string; content: string | null }> }): ScriptedStep {
  const last = body.messages.at(-1);
  const question = String(body.messages.filter((m) => m.role === 'user').at(-1)?.content ?? '');
  if (question.includes('approve') && last?.role !== 'tool') {
    return { toolCalls: [{ name: 'bash', arguments: JSON.stringify({ command: 'echo approved-run' }) }] };
  }
  if (question.includes('slow')) return { text: answerFor(question), chunkSize: 4, delayMs: 60 };
  return { text: answerFor(question), chunkSize: 12 };
}
