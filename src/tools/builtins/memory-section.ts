/**
 * System-prompt sections: the memories of the person the turn acts for, then the shared memory
 * (the same for everyone, written by admins), each labelled as what it is, most recently updated
 * first, at most {@link PROMPT_MEMORIES} entries and {@link PROMPT_MEMORY_CHARS} characters each.
 * Nobody else's memory is ever shown.
 */
import { hotCache } from '../../store/hot-cache.js';
import { type Memory, SHARED_MEMORY } from '../memory-store.js';
import type { PromptSection } from '../types.js';

/** Most memories of one kind (the person's, the shared) put into the prompt. */
export const PROMPT_MEMORIES = 50;
/** Most characters of one kind of memories put into the prompt. */
export const PROMPT_MEMORY_CHARS = 4000;

/** The lines of up to {@link PROMPT_MEMORIES} memories within {@link PROMPT_MEMORY_CHARS}, and a note when more exist. */
function lines(mems: Memory[]): string {
  const out: string[] = [];
  let used = 0;
  for (const m of mems.slice(0, PROMPT_MEMORIES)) {
    const line = `- ${m.key}: ${m.value.replace(/\s+/g, ' ')}`;
    if (used + line.length > PROMPT_MEMORY_CHARS) break;
    out.push(line);
    used += line.length + 1;
  }
  const more = mems.length > out.length ? '\n(more memories exist; use recall to search them)' : '';
  return `${out.join('\n')}${more}`;
}

/** The memories sections. */
export const memoriesSection: PromptSection = async ({ db, requester }) => {
  const cache = hotCache(db);
  const [own, common] = await Promise.all([
    cache.memories(requester, PROMPT_MEMORIES + 1),
    cache.memories(SHARED_MEMORY, PROMPT_MEMORIES + 1),
  ]);
  const parts: string[] = [];
  if (own.length) parts.push(`## Saved memories of this person (remember adds, forget removes)\n${lines(own)}`);
  if (common.length) {
    parts.push(
      `## Shared memories (the same for everyone; only admins change them, with shared: true)\n${lines(common)}`,
    );
  }
  return parts.length ? parts.join('\n\n') : null;
};
