/**
 * switchboard's answers to a server's own requests, made in the conversation whose tool call is
 * running on that server: an elicitation becomes question cards (one field after another, Decline
 * and Cancel on each), a URL elicitation a link with consent wording and Done, and a sampling
 * request an approval card (policy `ask`) before the configured model answers it. A request that
 * arrives while no call of the server runs belongs to no conversation and is declined.
 */
import type {
  CreateMessageRequest,
  CreateMessageResult,
  ElicitRequest,
  ElicitResult,
} from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from 'pino';
import { JOB_CHANNEL } from '../store/repos/jobs.js';
import type { AskInput, AskOutcome, ToolContext } from '../tools/types.js';
import type { McpServerConfig } from '../config-mcp.js';
import type { CallScope, McpHost } from './connection.js';
import { CANCEL, DECLINE, type FieldSchema, fieldButtons, fieldQuestion, parseField, SKIP } from './elicit-form.js';

/** What the host is configured with. */
export interface HostOptions {
  servers: Record<string, McpServerConfig>;
  /** How long one card waits for the user. */
  askTimeoutMs: number;
  /** Cap on a sampling request's `maxTokens`. */
  maxSamplingTokens: number;
  log: Logger;
}

/** JSON-RPC error code of a sampling request the user or the configuration refused. */
const REJECTED = -1;
/** Longest excerpt of a sampling request shown on its approval card. */
const MAX_CARD_EXCERPT = 1200;
/** Times one field is asked again after an invalid reply before the form is cancelled. */
const MAX_RETRIES = 5;

/** The host for every server of a configuration. */
export class SwitchboardHost implements McpHost<ToolContext> {
  constructor(private readonly options: HostOptions) {}

  async elicit(
    server: string,
    params: ElicitRequest['params'],
    scope: CallScope<ToolContext> | null,
    signal: AbortSignal,
  ): Promise<ElicitResult> {
    const ctx = scope?.owner;
    if (!scope || !ctx?.ask) {
      this.options.log.info({ server }, 'elicitation outside any conversation declined');
      return { action: 'decline' };
    }
    const both = AbortSignal.any([scope.signal, signal]);
    const ask = (input: Omit<AskInput, 'timeoutMs'>) =>
      (ctx.ask as NonNullable<ToolContext['ask']>)({ ...input, timeoutMs: this.options.askTimeoutMs }, both);
    const head = `🔌 MCP server "${server}" asks:`;
    if (params.mode === 'url') {
      const site = hostOf(params.url);
      const outcome = await ask({
        question: [
          `${head} ${params.message}`,
          '',
          params.url,
          '',
          `This link opens ${site ? `the site ${site}` : 'a site'} outside switchboard. Open it only if you ` +
            `trust the server "${server}" and that site, then tap Done.`,
        ].join('\n'),
        answers: ['Done', DECLINE, CANCEL],
      });
      const ended = endOf(outcome);
      if (ended) return { action: ended };
      return { action: /^done$/i.test((outcome as { answer: string }).answer.trim()) ? 'accept' : 'decline' };
    }
    const schema = params.requestedSchema as { properties?: Record<string, FieldSchema>; required?: string[] };
    const fields = Object.entries(schema.properties ?? {});
    const required = new Set(schema.required ?? []);
    const content: Record<string, string | number | boolean | string[]> = {};
    for (const [index, [name, field]] of fields.entries()) {
      let warning = '';
      for (let attempt = 0; ; attempt++) {
        const isRequired = required.has(name);
        const buttons = [...fieldButtons(field), ...(isRequired ? [] : [SKIP]), DECLINE, CANCEL];
        const counter = fields.length > 1 ? ` (${index + 1} of ${fields.length})` : '';
        const outcome = await ask({
          question: `${head} ${params.message}${counter}\n\n${warning}${fieldQuestion(field, name, isRequired)}`,
          answers: buttons,
        });
        const ended = endOf(outcome);
        if (ended) return { action: ended };
        const answer = (outcome as { answer: string }).answer.trim();
        if (!isRequired && answer.toLowerCase() === SKIP.toLowerCase()) break;
        const parsed = parseField(field, answer);
        if (parsed.ok) {
          content[name] = parsed.value as string | number | boolean | string[];
          break;
        }
        if (attempt >= MAX_RETRIES) return { action: 'cancel' };
        warning = `⚠️ Not accepted: ${parsed.reason}. Please answer again.\n`;
      }
    }
    return { action: 'accept', content };
  }

  async sample(
    server: string,
    params: CreateMessageRequest['params'],
    scope: CallScope<ToolContext> | null,
    signal: AbortSignal,
  ): Promise<CreateMessageResult> {
    const ctx = scope?.owner;
    if (!scope || !ctx?.sample) throw refused('Sampling declined: no conversation is waiting on this server.');
    const config = this.options.servers[server];
    const configured = config?.sampling ?? 'ask';
    // A job run has no one watching to approve: "ask" means no there.
    const policy = configured === 'ask' && ctx.channel === JOB_CHANNEL ? 'deny' : configured;
    if (policy === 'deny') throw refused(`Sampling is turned off for the MCP server "${server}".`);
    const maxTokens = Math.min(params.maxTokens, this.options.maxSamplingTokens);
    const messages = params.messages.map((m) => ({ role: m.role, text: textOf(m.content) }));
    const model = config?.sampling_model;
    const both = AbortSignal.any([scope.signal, signal]);
    if (policy === 'ask') {
      if (!ctx.ask) throw refused('Sampling declined: no one can approve it here.');
      const excerpt = [
        params.systemPrompt ? `System: ${params.systemPrompt}` : '',
        ...messages.map((m) => `${m.role === 'user' ? 'User' : 'Assistant'}: ${m.text}`),
      ]
        .filter(Boolean)
        .join('\n');
      const outcome = await ctx.ask(
        {
          question: [
            `🔌 MCP server "${server}" wants to ask the model${model ? ` ${model}` : ''} (at most ${maxTokens} tokens):`,
            '',
            excerpt.length > MAX_CARD_EXCERPT ? `${excerpt.slice(0, MAX_CARD_EXCERPT)}…` : excerpt,
            '',
            'Nothing is sent until you allow it. The answer goes back to the server.',
          ].join('\n'),
          answers: ['Allow', 'Deny'],
          timeoutMs: this.options.askTimeoutMs,
        },
        both,
      );
      if (outcome.kind !== 'answered' || !/^allow$/i.test(outcome.answer.trim())) {
        const why =
          outcome.kind === 'timeout'
            ? 'no answer in time'
            : outcome.kind === 'cancelled'
              ? 'cancelled'
              : 'the user denied it';
        throw refused(`Sampling declined: ${why}.`);
      }
    }
    const r = await ctx.sample(
      { system: params.systemPrompt, messages, maxTokens, temperature: params.temperature, model },
      both,
    );
    return { role: 'assistant', content: { type: 'text', text: r.text }, model: r.model, stopReason: r.stopReason };
  }
}

/** A refusal as the server should read it (a JSON-RPC error with this code and just this message). */
function refused(message: string): Error {
  return Object.assign(new Error(message), { code: REJECTED });
}

/** The spec's action for a question that ended without an answer, or for Decline / Cancel. */
function endOf(outcome: AskOutcome): 'decline' | 'cancel' | null {
  if (outcome.kind !== 'answered') return 'cancel';
  const a = outcome.answer.trim().toLowerCase();
  if (a === DECLINE.toLowerCase()) return 'decline';
  if (a === CANCEL.toLowerCase()) return 'cancel';
  return null;
}

/** The text of a sampling message's content (one block or several); other kinds are named. */
function textOf(content: unknown): string {
  const blocks = Array.isArray(content) ? content : [content];
  return blocks
    .map((b) => {
      const block = b as { type?: string; text?: string; mimeType?: string };
      return block.type === 'text'
        ? (block.text ?? '')
        : `[${block.type ?? 'content'}${block.mimeType ? ` ${block.mimeType}` : ''} not passed on]`;
    })
    .join('\n');
}

function hostOf(url: string): string | null {
  try {
    return new URL(url).host || null;
  } catch {
    return null;
  }
}
