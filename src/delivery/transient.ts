/**
 * The non-persisted lane: what a person sees that cannot be durable by nature (a Slack ephemeral
 * refusal, a command's answer shown to its caller alone). It is rendered by the surface's emitter
 * like everything else, sent once, and a failure is logged rather than retried: the person acts
 * again if it never arrived, and nothing else depends on it.
 */
import type { Logger } from 'pino';
import type { NoticeContent, TextContent } from '../contract/content.js';
import type { Part, Surface } from '../contract/surface.js';
import { renderContent } from './render.js';

/**
 * Show `content` to `userId` alone at `address`; never throws. A failure is logged and counts as
 * said (the person acts again). @returns false when the surface cannot whisper there now (see
 * `Surface.whisper`): the caller says it the old way.
 */
export async function whisper<A>(
  surface: Surface<A>,
  address: A,
  userId: string,
  content: TextContent | NoticeContent,
  log: Logger,
): Promise<boolean> {
  if (!surface.whisper) return false;
  try {
    for (const part of renderContent(surface as Surface, content))
      if (!(await surface.whisper(address, userId, part))) return false;
  } catch (err) {
    log.warn({ err }, 'a message to one person (not kept by the platform) failed');
  }
  return true;
}

/**
 * {@link whisper} for a message the channel has formatted itself (it names people in its own
 * markup); never throws. @returns false when the surface cannot whisper there now.
 */
export async function whisperPart<A>(
  surface: Surface<A>,
  address: A,
  userId: string,
  part: Part,
  log: Logger,
): Promise<boolean> {
  if (!surface.whisper) return false;
  return surface.whisper(address, userId, part).catch((err: unknown) => {
    log.warn({ err }, 'a message to one person (not kept by the platform) failed');
    return true;
  });
}
