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

/** Show `content` to `userId` alone at `address`; never throws. */
export async function whisper<A>(
  surface: Surface<A>,
  address: A,
  userId: string,
  content: TextContent | NoticeContent,
  log: Logger,
): Promise<void> {
  if (!surface.whisper) return;
  try {
    for (const part of renderContent(surface as Surface, content)) await surface.whisper(address, userId, part);
  } catch (err) {
    log.warn({ err }, 'a message to one person (not kept by the platform) failed');
  }
}

/** {@link whisper} for a message the channel has formatted itself (it names people in its own markup); never throws. */
export async function whisperPart<A>(
  surface: Surface<A>,
  address: A,
  userId: string,
  part: Part,
  log: Logger,
): Promise<void> {
  if (!surface.whisper) return;
  await surface
    .whisper(address, userId, part)
    .catch((err: unknown) => log.warn({ err }, 'a message to one person (not kept by the platform) failed'));
}
