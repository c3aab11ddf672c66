/**
 * A scripted OpenAI-compatible server on 127.0.0.1 for tests and benchmarks.
 * Speaks real HTTP: JSON and SSE streaming chat completions with tool-call deltas split across
 * chunks, 429 with Retry-After, 5xx, a hanging stream (for stop tests), and the audio endpoints.
 * Each request records whether the client went away before its response ended.
 */
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** One scripted tool call. `arguments` is sent verbatim (may be malformed on purpose). */
export interface ScriptedToolCall {
  id?: string;
  name: string;
  arguments: string;
}

/** One scripted response to a chat completion request. */
export type ScriptedStep =
  | {
      text: string;
      chunkSize?: number;
      delayMs?: number;
      usage?: { prompt: number; completion: number };
      /** Streamed first as reasoning deltas, as reasoning models do: `reasoning_content` (DeepSeek, vLLM) or `reasoning` (Ollama, OpenRouter). */
      reasoning?: { text: string; field?: 'reasoning_content' | 'reasoning' };
      /**
       * Points where the text stream stops until `until` settles: once `afterChars` characters
       * have been sent (whole chunks), nothing more is sent before it. A test waits on what the
       * client did with the text so far, whatever the client's speed; a promise that never settles
       * keeps the stream open until the client goes away.
       */
      pauses?: Array<{ afterChars: number; until: Promise<unknown> }>;
    }
  | { toolCalls: ScriptedToolCall[]; text?: string; chunkSize?: number }
  | { status: number; retryAfter?: string; body?: unknown }
  /** Stream `text` then keep the connection open until the client goes away. */
  | { hang: true; text?: string };

/** A request the server received, decoded. */
export interface RecordedRequest {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: any;
  /** Set when the client closed the connection before the response ended (an aborted request). */
  closedEarly?: boolean;
}

/** Handle on a running scripted server. */
export interface ScriptedLlm {
  /** Base URL to use as `OPENAI_BASE_URL` (ends in `/v1`). */
  url: string;
  requests: RecordedRequest[];
  /** Chat completion requests only. */
  chatRequests(): RecordedRequest[];
  /** Append steps to the script queue. */
  push(...steps: ScriptedStep[]): void;
  /** Instead of a queue, compute each step from the request. */
  setHandler(handler: ((body: any) => ScriptedStep) | null): void;
  /** Text returned by /audio/transcriptions. */
  transcript: string;
  /** Model ids `GET /models` lists; null answers 404 (servers without a model list). */
  models: string[] | null;
  close(): Promise<void>;
}

function chunkString(s: string, size: number): string[] {
  if (s.length === 0) return [''];
  const out: string[] = [];
  for (let i = 0; i < s.length; i += size) out.push(s.slice(i, i + size));
  return out;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Start a scripted server; the default reply when the script is empty is `ok`. */
export async function startScriptedLlm(options: { keepAliveTimeoutMs?: number } = {}): Promise<ScriptedLlm> {
  const queue: ScriptedStep[] = [];
  let handler: ((body: any) => ScriptedStep) | null = null;
  const requests: RecordedRequest[] = [];
  let counter = 0;
  const openResponses = new Set<http.ServerResponse>();

  const state: { transcript: string; models: string[] | null } = {
    transcript: 'transcribed voice note',
    models: ['test-model'],
  };

  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const raw = Buffer.concat(chunks);
    const url = req.url ?? '';
    let body: any = null;
    if ((req.headers['content-type'] ?? '').includes('application/json')) {
      try {
        body = JSON.parse(raw.toString('utf8'));
      } catch {
        body = raw.toString('utf8');
      }
    } else {
      body = raw.toString('latin1');
    }
    const recorded: RecordedRequest = { path: url, headers: req.headers, body };
    requests.push(recorded);
    res.on('close', () => {
      if (!res.writableEnded) recorded.closedEarly = true;
    });

    if (url.endsWith('/audio/transcriptions')) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ text: state.transcript }));
      return;
    }
    if (url.endsWith('/audio/speech')) {
      res.writeHead(200, { 'content-type': 'audio/ogg' });
      res.end(Buffer.from('OggS-fake-opus-audio'));
      return;
    }
    if (url.endsWith('/models')) {
      if (state.models === null) {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: 'not found' } }));
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          object: 'list',
          data: state.models.map((id) => ({ id, object: 'model', owned_by: 'emulator' })),
        }),
      );
      return;
    }
    if (!url.endsWith('/chat/completions')) {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: 'not found' } }));
      return;
    }
    if (req.headers.authorization === 'Bearer refused-key') {
      res.writeHead(401, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: 'Incorrect API key provided', type: 'invalid_request_error' } }));
      return;
    }

    const step: ScriptedStep = handler ? handler(body) : (queue.shift() ?? { text: 'ok' });
    const id = `chatcmpl-${++counter}`;
    const model = body?.model ?? 'test-model';

    if ('status' in step) {
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      if (step.retryAfter !== undefined) headers['retry-after'] = step.retryAfter;
      res.writeHead(step.status, headers);
      res.end(JSON.stringify(step.body ?? { error: { message: `scripted ${step.status}` } }));
      return;
    }

    if (!body?.stream && 'hang' in step) {
      // Never answer (a summary request the test kills the process during).
      openResponses.add(res);
      await new Promise<void>((resolve) => res.on('close', () => resolve()));
      return;
    }
    if (!body?.stream) {
      const text = 'text' in step ? (step.text ?? '') : '';
      const toolCalls =
        'toolCalls' in step
          ? step.toolCalls.map((t, i) => ({
              id: t.id ?? `call_${counter}_${i}`,
              type: 'function',
              function: { name: t.name, arguments: t.arguments },
            }))
          : undefined;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          id,
          object: 'chat.completion',
          created: Math.floor(Date.now() / 1000),
          model,
          choices: [
            {
              index: 0,
              message: { role: 'assistant', content: text, tool_calls: toolCalls },
              finish_reason: toolCalls ? 'tool_calls' : 'stop',
            },
          ],
          usage:
            'usage' in step && step.usage
              ? {
                  prompt_tokens: step.usage.prompt,
                  completion_tokens: step.usage.completion,
                  total_tokens: step.usage.prompt + step.usage.completion,
                }
              : { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
        }),
      );
      return;
    }

    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
    openResponses.add(res);
    res.on('close', () => openResponses.delete(res));
    const send = (delta: unknown, finish: string | null = null, usage?: unknown) =>
      res.write(
        `data: ${JSON.stringify({
          id,
          object: 'chat.completion.chunk',
          created: Math.floor(Date.now() / 1000),
          model,
          choices: delta === null ? [] : [{ index: 0, delta, finish_reason: finish }],
          ...(usage ? { usage } : {}),
        })}\n\n`,
      );

    send({ role: 'assistant', content: '' });
    if ('hang' in step) {
      if (step.text) send({ content: step.text });
      await new Promise<void>((resolve) => res.on('close', () => resolve()));
      return;
    }
    const size = step.chunkSize ?? 7;
    if ('reasoning' in step && step.reasoning) {
      for (const piece of chunkString(step.reasoning.text, size))
        send({ [step.reasoning.field ?? 'reasoning_content']: piece, content: null });
    }
    if ('text' in step && step.text) {
      const pauses = 'pauses' in step ? [...(step.pauses ?? [])] : [];
      let gone = false;
      const closed = new Promise<void>((resolve) =>
        res.on('close', () => {
          gone = true;
          resolve();
        }),
      );
      let sent = 0;
      for (const piece of chunkString(step.text, size)) {
        const pause = pauses.find((p) => sent >= p.afterChars);
        if (pause) {
          pauses.splice(pauses.indexOf(pause), 1);
          await Promise.race([pause.until, closed]);
          if (gone) return;
        }
        send({ content: piece });
        sent += piece.length;
        if ('delayMs' in step && step.delayMs) await sleep(step.delayMs);
      }
    }
    let finish = 'stop';
    if ('toolCalls' in step) {
      finish = 'tool_calls';
      step.toolCalls.forEach((t, index) => {
        const callId = t.id ?? `call_${counter}_${index}`;
        send({ tool_calls: [{ index, id: callId, type: 'function', function: { name: t.name, arguments: '' } }] });
        for (const piece of chunkString(t.arguments, size)) {
          send({ tool_calls: [{ index, function: { arguments: piece } }] });
        }
      });
    }
    send({}, finish);
    const usage = 'usage' in step && step.usage ? step.usage : { prompt: 12, completion: 6 };
    send(null, null, {
      prompt_tokens: usage.prompt,
      completion_tokens: usage.completion,
      total_tokens: usage.prompt + usage.completion,
    });
    res.write('data: [DONE]\n\n');
    res.end();
  });
  server.keepAliveTimeout = options.keepAliveTimeoutMs ?? 1000;
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    chatRequests: () => requests.filter((r) => r.path.endsWith('/chat/completions')),
    push: (...steps) => queue.push(...steps),
    setHandler: (h) => {
      handler = h;
    },
    get transcript() {
      return state.transcript;
    },
    set transcript(v: string) {
      state.transcript = v;
    },
    get models() {
      return state.models;
    },
    set models(v: string[] | null) {
      state.models = v;
    },
    close: async () => {
      for (const r of openResponses) r.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
