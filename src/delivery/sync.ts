/**
 * Bringing the platform messages of one delivery to what it should show: edit the messages whose
 * content changed, post the missing ones (recording each reference at once, so a crash never
 * repeats a post), and — once final — delete the ones the content no longer needs.
 */
import type { Logger } from 'pino';
import { fingerprint, type SentRef } from './render.js';
import type { ConfirmSend, Part, Surface } from '../contract/surface.js';

/** Arguments of {@link syncParts}. */
export interface SyncArgs {
  surface: Surface;
  address: unknown;
  /** The messages sent so far; updated in place. */
  refs: SentRef[];
  parts: Part[];
  /** Final content: surplus messages are deleted. While streaming they stay. */
  final: boolean;
  /** A crash or a lost answer left the send ambiguous: look a missing message up before posting it again. */
  ambiguous: boolean;
  /**
   * The newest reference shown before this delivery (see `newestRefsBefore`): a look-up of its
   * first message takes nothing older. Its later messages are bounded by their predecessor.
   */
  shownBefore?: string;
  /** Set while a post is on its way: a failure then may have reached the platform. */
  progress?: { posting: boolean };
  /** Persist `refs` (after every post and edit, before the next platform call). */
  save: () => Promise<void>;
  /**
   * Called right before every post and edit; throws to stop before the platform sees the call. The
   * surface is handed it too, to confirm again after a wait of its own (`ConfirmSend`).
   */
  beforeCall?: ConfirmSend;
  /**
   * The caller records `refs` itself as soon as this returns (with the row's outcome): the save
   * after the last change is left to it, one write instead of two.
   */
  callerSavesLast?: boolean;
  /**
   * A message deleted or too old to edit is left as it is instead of posted anew (a copy of a card
   * that a tap made known: the card's own row shows it).
   */
  leaveGone?: boolean;
  log: Logger;
}

/** Sync `refs` to `parts` on the surface. Throws the platform's error; `refs` keeps what landed. */
export async function syncParts(args: SyncArgs): Promise<void> {
  const { surface, address, refs, parts } = args;
  // A change is saved before the next platform call (or at the end): as soon as after it, since
  // nothing else runs in between, and the last one can go with the caller's own write.
  let unsaved = false;
  const save = async () => {
    if (!unsaved) return;
    unsaved = false;
    await args.save();
  };
  for (const [i, part] of parts.entries()) {
    const shown = fingerprint(part);
    const existing = refs[i];
    if (existing?.shown === shown) continue;
    await save();
    if (!existing) {
      let ref: string | undefined;
      if (args.ambiguous && surface.findPosted)
        ref = await surface.findPosted(address, part, refs.at(-1)?.ref ?? args.shownBefore);
      if (ref === undefined) {
        await args.beforeCall?.();
        if (args.progress) args.progress.posting = true;
        ref = await surface.post(address, part, args.beforeCall);
        if (args.progress) args.progress.posting = false;
      }
      refs.push({ ref, shown });
      unsaved = true;
      continue;
    }
    await args.beforeCall?.();
    try {
      await surface.edit(address, existing.ref, part, args.beforeCall);
    } catch (err) {
      // Deleted by the user or too old to edit: the text must still arrive, so post it anew.
      if (surface.classify(err).kind !== 'gone') throw err;
      if (!args.leaveGone) {
        if (args.progress) args.progress.posting = true;
        existing.ref = await surface.post(address, part, args.beforeCall);
        if (args.progress) args.progress.posting = false;
      }
    }
    existing.shown = shown;
    unsaved = true;
  }
  if (args.final && refs.length > parts.length) {
    await save();
    for (const extra of refs.slice(parts.length)) {
      await surface
        .delete(address, extra.ref)
        .catch((err: unknown) => args.log.debug({ err }, 'deleting a surplus message failed'));
    }
    refs.length = parts.length;
    unsaved = true;
  }
  if (!args.callerSavesLast) await save();
}
