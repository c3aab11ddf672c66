/**
 * The demo model behind `switchboard chat --demo` and `start --demo`: a small scripted model served over the
 * OpenAI chat-completions protocol on 127.0.0.1, so the real client, turn engine, approvals,
 * questions and buttons run exactly as with a real endpoint, with no account or key. It is not
 * an LLM: it picks a scripted step from keywords of the last message, and says so in every answer.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** The model name the demo endpoint lists and answers as. */
export const DEMO_MODEL = 'switchboard-demo';

/** Every answer starts with this label, so a demo reply is never taken for a model's. */
export const DEMO_LABEL = '[demo]';

/** One scripted step: text, or one tool call. */
type Step = { text: string } | { tool: string; args: Record<string, unknown> };

interface ChatMessage {
  role: string;
  content?: unknown;
  tool_calls?: Array<{ function?: { name?: string } }>;
}

const MENU = [
  `${DEMO_LABEL} This is switchboard's built-in demo model: a short script, not an LLM. Try:`,
  '- "write a file": the agent asks to write demo.txt in the workspace, and you approve or deny it',
  '- "ask me something": the agent asks a question with suggested answers (buttons in Telegram, Slack and the web chat)',
  '- "/help": the chat commands',
  'For a real model set OPENAI_API_KEY (or OPENAI_BASE_URL for Ollama, LM Studio, vLLM or a llama.cpp server) and start switchboard again without --demo.',
].join('\n');

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content))
    return content
      .map((p) => (typeof p === 'object' && p && 'text' in p ? String((p as { text: unknown }).text) : ''))
      .join(' ');
  return '';
}

/** The step that answers `messages`, given the tools offered. */
export function demoStep(messages: ChatMessage[], tools: string[]): Step {
  const last = messages.at(-1);
  if (last?.role === 'tool') {
    const called = [...messages].reverse().find((m) => m.role === 'assistant' && m.tool_calls?.length)?.tool_calls?.[0]
      ?.function?.name;
    const result = textOf(last.content).slice(0, 300);
    if (called === 'ask_user_clarification')
      return {
        text:
          `${DEMO_LABEL} You answered: ${result.replace(/^The user answered:\s*/, '').replace(/\.$/, '')}. ` +
          `That was a question; in Telegram, Slack and the web chat its suggested answers are buttons.`,
      };
    return { text: `${DEMO_LABEL} The ${called ?? 'tool'} call came back with: ${result}` };
  }
  const said = textOf(last?.content).toLowerCase();
  if (/\b(write|file|approv)/.test(said) && tools.includes('write_file')) {
    return {
      tool: 'write_file',
      args: { path: 'demo.txt', content: 'Written by the switchboard demo after you approved it.\n' },
    };
  }
  if (/\b(ask|question|button)/.test(said) && tools.includes('ask_user_clarification')) {
    return {
      tool: 'ask_user_clarification',
      args: { question: 'Which colour should the demo use?', suggested_answers: ['red', 'green', 'blue'] },
    };
  }
  return { text: MENU };
}

/** A running demo endpoint. */
export interface DemoModel {
  /** Base URL to use as `llm.base_url` (ends in /v1). */
  url: string;
  close(): Promise<void>;
}

/** Serve the demo model on a free loopback port. */
export async function startDemoModel(): Promise<DemoModel> {
  let calls = 0;
  const server = http.createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    if (req.method === 'GET' && path === '/v1/models') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ object: 'list', data: [{ id: DEMO_MODEL, object: 'model', owned_by: 'switchboard' }] }));
      return;
    }
    if (req.method !== 'POST' || path !== '/v1/chat/completions') {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          error: { message: `the demo model serves only /v1/chat/completions and /v1/models, not ${path}` },
        }),
      );
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let body: { messages?: ChatMessage[]; tools?: Array<{ function?: { name?: string } }>; stream?: boolean };
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: 'the request body is not JSON' } }));
        return;
      }
      const tools = (body.tools ?? []).map((t) => t.function?.name ?? '').filter(Boolean);
      const step = demoStep(body.messages ?? [], tools);
      const id = `demo-${++calls}`;
      const created = Math.floor(Date.now() / 1000);
      const toolCall =
        'tool' in step
          ? {
              index: 0,
              id: `call_${id}`,
              type: 'function',
              function: { name: step.tool, arguments: JSON.stringify(step.args) },
            }
          : null;
      const usage = { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };
      if (!body.stream) {
        res.writeHead(200, { 'content-type': 'application/json' });
        const message = toolCall
          ? { role: 'assistant', content: null, tool_calls: [toolCall] }
          : { role: 'assistant', content: (step as { text: string }).text };
        res.end(
          JSON.stringify({
            id,
            object: 'chat.completion',
            created,
            model: DEMO_MODEL,
            choices: [{ index: 0, message, finish_reason: toolCall ? 'tool_calls' : 'stop' }],
            usage,
          }),
        );
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      const send = (delta: unknown, finish: string | null = null) => {
        const chunk = { id, object: 'chat.completion.chunk', created, model: DEMO_MODEL };
        res.write(`data: ${JSON.stringify({ ...chunk, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`);
      };
      send({ role: 'assistant', content: '' });
      if (toolCall) send({ tool_calls: [toolCall] });
      // Streamed a line at a time, as a model streams its answer.
      else
        for (const piece of (step as { text: string }).text.match(/[^\n]*\n?/g) ?? [])
          if (piece) send({ content: piece });
      send({}, toolCall ? 'tool_calls' : 'stop');
      res.write(
        `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model: DEMO_MODEL, choices: [], usage })}\n\n`,
      );
      res.end('data: [DONE]\n\n');
    });
  });
  server.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  server.unref();
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
