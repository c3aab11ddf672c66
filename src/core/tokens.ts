/**
 * Token counts for the history budget. OpenAI-style models are counted with `gpt-tokenizer`
 * (o200k_base, the encoding of the gpt-4o and o-series families; loaded on first use, as its rank
 * table costs about a second to read); other models, whose tokenizers switchboard cannot know,
 * with the estimate of ≈ 4 characters a token. `llm.tokenizer` picks: `auto`, `openai`, `estimate`.
 */
import type { Config } from '../config.js';

/** Counts the tokens of a text (without per-message overhead). */
export type TokenCounter = (text: string) => number;

/** ≈ 4 characters a token: the fallback for models whose tokenizer is unknown. */
export const estimateCounter: TokenCounter = (text) => Math.ceil(text.length / 4);

/** Tokens a message costs on top of its text (role, separators), as OpenAI documents it. */
export const MESSAGE_OVERHEAD = 4;

/** Texts shorter than this are counted again each time (cheap; not worth a cache entry). */
const REMEMBER_FROM_CHARS = 256;
/** Long texts whose counts are kept (the system prompt, the summary … of the chats in flight). */
const REMEMBERED_TEXTS = 64;

/**
 * `count`, remembering the counts of the last few long texts. Every model round counts its system
 * prompt (with the conversation's summary) again, the same text as the round before; a tokenizer
 * pays for that in proportion to its length (gpt-tokenizer: about a millisecond per 4 000
 * characters), a lookup only hashes it. Log rows are cached per row elsewhere (`messageTokens`).
 */
export function rememberingCounts(count: TokenCounter): TokenCounter {
  const known = new Map<string, number>();
  return (text) => {
    if (text.length < REMEMBER_FROM_CHARS) return count(text);
    let n = known.get(text);
    if (n === undefined) {
      n = count(text);
      if (known.size >= REMEMBERED_TEXTS) known.delete(known.keys().next().value as string);
      known.set(text, n);
    }
    return n;
  };
}

let loading: Promise<TokenCounter> | null = null;

function loadOpenAi(): Promise<TokenCounter> {
  loading ??= import('gpt-tokenizer').then((m) =>
    rememberingCounts((text: string) => (text.length === 0 ? 0 : m.countTokens(text))),
  );
  return loading;
}

/** True for model names of the OpenAI families the o200k/cl100k encodings were made for. */
export function isOpenAiModel(model: string): boolean {
  return /^(gpt-|o\d|chatgpt|text-embedding|openai\/)/i.test(model);
}

/** The counter for a model under `llm.tokenizer`. */
export async function counterFor(config: Config, model: string): Promise<TokenCounter> {
  const choice = config.llm.tokenizer;
  if (choice === 'estimate' || (choice === 'auto' && !isOpenAiModel(model))) return estimateCounter;
  try {
    return await loadOpenAi();
  } catch {
    return estimateCounter;
  }
}
