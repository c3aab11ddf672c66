/**
 * The only module that talks to the model endpoint (the `openai` SDK). Streams chat completions,
 * reassembling tool-call deltas (parallel calls, arguments split across chunks); retries 429/5xx
 * with backoff honouring Retry-After (the SDK's retry layer, `llm.max_retries`); maps failures to
 * coded errors the turn engine turns into a clear `error` event.
 */
import type { SampleRequest, SampleResult } from '../tools/types.js';
import { modelFetch } from './model-fetch.js';
import type OpenAI from 'openai';
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import { MODEL_NOT_CONFIGURED } from '../delivery/notices.js';
import { SwitchboardError, networkCause } from '../errors.js';
import { modelKeyMissing } from './model-check.js';

/** A model-facing tool call. */
export interface ModelToolCall {
  /** The store's key of the call (unique; the model's id is not, on some servers). */
  id: string;
  /** The id the model gave the call, sent back with it and its result; absent on old rows. */
  wireId?: string;
  name: string;
  arguments: string;
}

/** The id to send the model for a call: its own, as it gave it (providers validate their format). */
export function wireIdOf(call: ModelToolCall): string {
  return call.wireId || call.id;
}

/** A part of a user message: text, or an image as a `data:` URL (vision). */
export type ContentPart = { type: 'text'; text: string } | { type: 'image_url'; image_url: { url: string } };

/** A message in the model's format, independent of the SDK's types. */
export type ChatMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string | ContentPart[] }
  | { role: 'assistant'; content: string | null; toolCalls?: ModelToolCall[] }
  | { role: 'tool'; toolCallId: string; content: string };

/** Serialised `tools` members (`,"tools":[…]}`, UTF-8), per tool list (the registry hands out one array per list). */
const toolsJson = new WeakMap<ModelTool[], Buffer>();

/** The end of the request body: its `tools` member as JSON, built once per tool list. */
function serialisedTools(tools: ModelTool[]): Buffer {
  let json = toolsJson.get(tools);
  if (json === undefined) {
    const list = JSON.stringify(
      tools.map((t) => ({
        type: 'function',
        function: { name: t.name, description: t.description, parameters: t.parameters },
      })),
    );
    json = Buffer.from(`,"tools":${list}}`);
    toolsJson.set(tools, json);
  }
  return json;
}

/**
 * A request body of `params` and the tool list, as bytes. Bytes go to the HTTP client as they are;
 * a string (mostly the tool catalog) would be copied to a well-formed string and encoded again on
 * every request.
 */
function requestBody(params: object, tools: ModelTool[]): Buffer {
  const head = JSON.stringify(params);
  return Buffer.concat([Buffer.from(head.slice(0, -1)), serialisedTools(tools)]);
}

/** A tool as offered to the model. */
export interface ModelTool {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

/** What one streamed round produced. */
export interface StreamResult {
  content: string;
  toolCalls: ModelToolCall[];
  usage: { prompt: number; completion: number };
  /** True when the stream ended because the signal fired (the SDK ends silently then). */
  aborted: boolean;
}

/** Model endpoint failures: `llm_not_configured`, `llm_unreachable`, `llm_auth`, `llm_rate_limited`, `llm_error`, `voice_disabled`. */
export class LlmError extends SwitchboardError {}

/** Options of one streamed round. */
export interface StreamOptions {
  model: string;
  messages: ChatMessage[];
  tools: ModelTool[];
  signal: AbortSignal;
  onDelta?(text: string): void;
}

function toSdkMessage(m: ChatMessage): OpenAI.ChatCompletionMessageParam {
  switch (m.role) {
    case 'system':
      return { role: 'system', content: m.content };
    case 'user':
      return { role: 'user', content: m.content };
    case 'tool':
      return { role: 'tool', tool_call_id: m.toolCallId, content: m.content };
    case 'assistant':
      return {
        role: 'assistant',
        content: m.content,
        ...(m.toolCalls?.length
          ? {
              tool_calls: m.toolCalls.map((c) => ({
                id: wireIdOf(c),
                type: 'function' as const,
                function: { name: c.name, arguments: c.arguments },
              })),
            }
          : {}),
      };
  }
}

/**
 * An HTTP 404 from the chat endpoint, with what to do about it: most often the base URL lacks
 * `/v1`; otherwise the server does not know the model.
 */
export function endpointNotFoundText(baseUrl: string, detail: string): string {
  const url = `${baseUrl.replace(/\/+$/, '')}/chat/completions`;
  const hint = /\/v\d+$/.test(baseUrl.replace(/\/+$/, ''))
    ? 'is the model name one the server lists (`switchboard doctor` checks)?'
    : 'does the base URL end in /v1?';
  return `HTTP 404 from ${url} — ${hint} (${detail})`;
}

/** Client for any OpenAI-compatible endpoint. */
export class LlmClient {
  private readonly baseUrl: string;
  /** The SDK, loaded with the first request (not needed before `start` is ready). */
  private sdk: typeof OpenAI | null = null;
  private loading: Promise<OpenAI> | null = null;

  constructor(
    private readonly config: Config,
    private readonly log: Logger,
  ) {
    this.baseUrl = config.llm.base_url ?? 'https://api.openai.com/v1';
  }

  /**
   * The SDK client, created on first use.
   * @throws LlmError `llm_not_configured` when no model is configured: no request goes out then.
   */
  private client(): Promise<OpenAI> {
    if (modelKeyMissing(this.config)) return Promise.reject(new LlmError('llm_not_configured', MODEL_NOT_CONFIGURED));
    const key = this.config.llm.api_key;
    this.loading ??= import('openai').then(({ default: Sdk }) => {
      this.sdk = Sdk;
      return new Sdk({
        // Local endpoints often need no key. The SDK insists on one, so it gets a placeholder, and
        // the Authorization header is dropped: a made-up key is never sent anywhere.
        apiKey: key || 'unused',
        ...(key ? {} : { defaultHeaders: { Authorization: null } }),
        baseURL: this.baseUrl,
        maxRetries: this.config.llm.max_retries,
        timeout: this.config.llm.request_timeout_seconds * 1000,
        fetch: modelFetch,
      });
    });
    return this.loading;
  }

  /** Map SDK errors to coded, user-readable errors. */
  private mapError(err: unknown): LlmError {
    if (err instanceof LlmError) return err;
    const OpenAI = this.sdk;
    if (!OpenAI)
      return new LlmError(
        'llm_error',
        `model client could not be loaded: ${(err as Error)?.message ?? String(err)}`,
        err,
      );
    if (err instanceof OpenAI.APIConnectionError) {
      return new LlmError(
        'llm_unreachable',
        `cannot reach the model endpoint at ${this.baseUrl}: ${networkCause(err)} — is the server running ` +
          `and the base URL right? (\`switchboard doctor\` checks)`,
        err,
      );
    }
    if (err instanceof OpenAI.AuthenticationError || err instanceof OpenAI.PermissionDeniedError) {
      return new LlmError(
        'llm_auth',
        `the model endpoint refused the API key (HTTP ${err.status}) — check OPENAI_API_KEY (llm.api_key); local servers usually need none`,
        err,
      );
    }
    if (err instanceof OpenAI.RateLimitError) {
      return new LlmError(
        'llm_rate_limited',
        'the model endpoint is rate limiting requests (HTTP 429); retries exhausted',
        err,
      );
    }
    if (err instanceof OpenAI.NotFoundError) {
      return new LlmError('llm_error', endpointNotFoundText(this.baseUrl, err.message), err);
    }
    if (err instanceof OpenAI.APIError) {
      return new LlmError('llm_error', `the model endpoint answered HTTP ${err.status ?? '?'}: ${err.message}`, err);
    }
    return new LlmError('llm_error', `model call failed: ${(err as Error)?.message ?? String(err)}`, err);
  }

  /** Stream one round. Resolves with `aborted: true` (not an exception) when the signal fires. */
  async stream(options: StreamOptions): Promise<StreamResult> {
    const calls: ModelToolCall[] = [];
    let content = '';
    const usage = { prompt: 0, completion: 0 };
    try {
      const params = {
        model: options.model,
        messages: options.messages.map(toSdkMessage),
        ...(this.config.llm.temperature !== undefined ? { temperature: this.config.llm.temperature } : {}),
        stream: true as const,
        stream_options: { include_usage: true },
      };
      // The tool catalog is most of the request body and rarely changes: it is serialised once per
      // tool list and joined to the body, which the SDK then sends as it is.
      const body = options.tools.length ? requestBody(params, options.tools) : undefined;
      const stream = await (await this.client()).chat.completions.create(params, {
        signal: options.signal,
        ...(body ? { body, headers: { 'content-type': 'application/json' } } : {}),
      });
      for await (const chunk of stream) {
        if (chunk.usage) {
          usage.prompt = chunk.usage.prompt_tokens ?? 0;
          usage.completion = chunk.usage.completion_tokens ?? 0;
        }
        const delta = chunk.choices?.[0]?.delta;
        if (!delta) continue;
        if (delta.content) {
          content += delta.content;
          options.onDelta?.(delta.content);
        }
        for (const tc of delta.tool_calls ?? []) {
          const slot = calls[tc.index] ?? { id: '', name: '', arguments: '' };
          calls[tc.index] = slot;
          if (tc.id) slot.id = tc.id;
          if (tc.function?.name) slot.name += tc.function.name;
          if (tc.function?.arguments) slot.arguments += tc.function.arguments;
        }
      }
    } catch (err) {
      if (options.signal.aborted) return { content, toolCalls: [], usage, aborted: true };
      throw this.mapError(err);
    }
    // The SDK ends a stream silently when aborted: check, or a stopped turn looks finished.
    if (options.signal.aborted) return { content, toolCalls: [], usage, aborted: true };
    const toolCalls = calls
      .filter((c): c is ModelToolCall => c !== undefined && c.name.length > 0)
      .map((c, i) => ({ ...c, id: c.id || `call_${Date.now().toString(36)}_${i}` }));
    return { content, toolCalls, usage, aborted: false };
  }

  /**
   * One non-streamed answer to a system prompt and one user message (conversation summaries),
   * with the endpoint's reported usage.
   */
  async answer(
    system: string,
    user: string,
    model: string,
    signal: AbortSignal,
  ): Promise<{ content: string; usage: { prompt: number; completion: number } }> {
    try {
      const r = await (await this.client()).chat.completions.create(
        {
          model,
          messages: [
            { role: 'system', content: system },
            { role: 'user', content: user },
          ],
        },
        { signal },
      );
      return {
        content: r.choices[0]?.message?.content ?? '',
        usage: { prompt: r.usage?.prompt_tokens ?? 0, completion: r.usage?.completion_tokens ?? 0 },
      };
    } catch (err) {
      throw this.mapError(err);
    }
  }

  /** A text description of an image (`llm.vision_model` for a model without vision). */
  async describeImage(model: string, url: string, signal: AbortSignal): Promise<string> {
    try {
      const r = await (await this.client()).chat.completions.create(
        {
          model,
          messages: [
            {
              role: 'user',
              content: [
                {
                  type: 'text',
                  text:
                    'Describe this image for someone who cannot see it: its content, any text in it verbatim, and ' +
                    'details that matter. Reply with the description only.',
                },
                { type: 'image_url', image_url: { url } },
              ],
            },
          ],
        },
        { signal },
      );
      return r.choices[0]?.message?.content ?? '';
    } catch (err) {
      throw this.mapError(err);
    }
  }

  /** One non-streamed answer to a single prompt, with the default model. */
  async complete(prompt: string, signal: AbortSignal, model = this.config.llm.model): Promise<string> {
    try {
      const r = await (await this.client()).chat.completions.create(
        { model, messages: [{ role: 'user', content: prompt }] },
        { signal },
      );
      return r.choices[0]?.message?.content ?? '';
    } catch (err) {
      throw this.mapError(err);
    }
  }

  /** One non-streamed answer to a message list with a token cap (an MCP server's sampling request). */
  async sample(request: SampleRequest, signal: AbortSignal, model: string): Promise<SampleResult> {
    const messages = [
      ...(request.system ? [{ role: 'system' as const, content: request.system }] : []),
      ...request.messages.map((m) => ({ role: m.role, content: m.text })),
    ];
    try {
      const r = await (await this.client()).chat.completions.create(
        {
          model,
          messages,
          max_tokens: request.maxTokens,
          ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
        },
        { signal },
      );
      const choice = r.choices[0];
      const stopReason =
        choice?.finish_reason === 'length'
          ? 'maxTokens'
          : choice?.finish_reason === 'stop'
            ? 'endTurn'
            : (choice?.finish_reason ?? 'endTurn');
      return { text: choice?.message?.content ?? '', model: r.model || model, stopReason };
    } catch (err) {
      throw this.mapError(err);
    }
  }

  /** Transcribe audio, given as its bytes and file name (`audio.transcription_enabled`). */
  async transcribe(audio: { bytes: Buffer; name: string }): Promise<string> {
    if (!this.config.audio.transcription_enabled) {
      throw new LlmError('voice_disabled', 'voice transcription is turned off (audio.transcription_enabled)');
    }
    try {
      const { toFile } = await import('openai');
      const r = await (await this.client()).audio.transcriptions.create({
        file: await toFile(audio.bytes, audio.name),
        model: this.config.audio.transcription_model,
      });
      return r.text;
    } catch (err) {
      throw this.mapError(err);
    }
  }

  /** Synthesise speech as opus (`audio.speech_enabled`). */
  async speak(text: string, signal: AbortSignal): Promise<Buffer> {
    if (!this.config.audio.speech_enabled) {
      throw new LlmError('voice_disabled', 'voice messages are turned off (audio.speech_enabled)');
    }
    try {
      const r = await (await this.client()).audio.speech.create(
        {
          model: this.config.audio.speech_model,
          voice: this.config.audio.speech_voice as 'alloy',
          input: text,
          response_format: 'opus',
        },
        { signal },
      );
      return Buffer.from(await r.arrayBuffer());
    } catch (err) {
      throw this.mapError(err);
    }
  }

  /**
   * The model ids the endpoint lists (`GET /models`, `switchboard doctor`); null when the endpoint
   * has no model list (404/405/501), which some OpenAI-compatible servers lack.
   */
  async listModels(): Promise<string[] | null> {
    try {
      const page = await (await this.client()).models.list();
      return page.data.map((m) => m.id);
    } catch (err) {
      if (this.sdk && err instanceof this.sdk.APIError && [404, 405, 501].includes(err.status ?? 0)) return null;
      const mapped = this.mapError(err);
      this.log.debug({ err: mapped }, 'model endpoint ping failed');
      throw mapped;
    }
  }
}
