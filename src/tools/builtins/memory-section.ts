/**
 * System-prompt section: saved memories, most recently updated first, at most
 * {@link PROMPT_MEMORIES} entries and {@link PROMPT_MEMORY_CHARS} characters.
 */
import { hotCache } from '../../store/hot-cache.js';
import type { PromptSection } from '../types.js';

/** Most memories put into the prompt. */
export const PROMPT_MEMORIES = 50;
/** Most characters of memories put into the prompt. */
export const PROMPT_MEMORY_CHARS = 4000;

/** The memories section. */
export const memoriesSection: PromptSection = async ({ db }) => {
  const mems = await hotCache(db).memories(PROMPT_MEMORIES + 1);
  if (mems.length === 0) return null;
  const lines: string[] = [];
  let used = 0;
  for (const m of mems.slice(0, PROMPT_MEMORIES)) {
    const line = `- ${m.key}: ${m.value.replace(/\s+/g, ' ')}`;
    if (used + line.length > PROMPT_MEMORY_CHARS) break;
    lines.push(line);
    used += line.length + 1;
  }
  const more = mems.length > lines.length ? '\n(more memories exist; use recall to search them)' : '';
  return `## Saved memories (remember adds, forget removes)\n${lines.join('\n')}${more}`;
};
