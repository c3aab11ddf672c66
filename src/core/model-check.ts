/**
 * Whether a model name is one the endpoint offers: the same check for `switchboard doctor` and
 * for `/model NAME` in a chat, so a name doctor would fail is refused in the chat too.
 */
import type { Config } from '../config.js';
import { SwitchboardError } from '../errors.js';

/** The endpoint's address as shown to users. */
export function endpointOf(config: Config): string {
  return config.llm.base_url ?? 'https://api.openai.com/v1';
}

/**
 * True when no model is configured: no key, and the endpoint is OpenAI's own (the default), which
 * refuses every request without one. A local server (any other base URL) may need no key.
 */
export function modelKeyMissing(config: Config): boolean {
  if (config.llm.api_key) return false;
  try {
    return new URL(endpointOf(config)).hostname === 'api.openai.com';
  } catch {
    return false;
  }
}

/** "(it lists: a, b, … (N in all))": the first ten names the endpoint lists. */
export function listedModels(models: string[]): string {
  return models.slice(0, 10).join(', ') + (models.length > 10 ? `, … (${models.length} in all)` : '');
}

/** The message when `model` is not among the endpoint's models. */
export function unlistedModel(model: string, models: string[], where: string): string {
  return `"${model}" is not listed by ${where} (it lists: ${listedModels(models)})`;
}

/**
 * Refuse a model the endpoint does not list. An endpoint without a model list (or an empty
 * one), or one not reachable now, cannot say: the name is accepted and a turn reports any error.
 * @throws SwitchboardError `model_unknown` naming the endpoint and what it lists
 */
export async function assertModelListed(
  listModels: () => Promise<string[] | null>,
  model: string,
  where: string,
): Promise<void> {
  let models: string[] | null;
  try {
    models = await listModels();
  } catch {
    return;
  }
  if (models && models.length > 0 && !models.includes(model)) {
    throw new SwitchboardError('model_unknown', `${unlistedModel(model, models, where)}; the model was not changed`);
  }
}
