/**
 * Replies streamed as the platform's own streamed messages ({@link NativeStreams}, Slack's
 * `chat.startStream`). Such a message *is* the reply: its reference is recorded on the row when
 * the stream starts, each append is saved before the next platform call, and the row's final
 * text completes it with a stop — so a crash mid-stream leaves a row the next start finishes,
 * like an edited message.
 *
 * A row's references say what each message holds: `~stream:<o|c>:<chars>:<startedAt>:<hash>` —
 * open or closed, how many characters of the reply's Markdown it holds (the messages hold the text
 * in order, back to back), when it started, and a hash of its text. A text that no longer begins
 * with what the messages hold (a turn re-run after a crash answered differently), a stream that
 * expired or was refused, or a final text a stream cannot show (a title, buttons) falls back to
 * post-then-edit: the messages are kept, edited to the rendered text like any other reply's.
 */
import { createHash } from 'node:crypto';
import type { Logger } from 'pino';
import type { ConfirmSend, NativeStreams, Surface } from '../contract/surface.js';
import type { SentRef } from './render.js';

const MARK = '~stream:';

interface StreamRef {
  ref: string;
  open: boolean;
  chars: number;
  startedAt: number;
  hash: string;
}

function hashOf(text: string): string {
  return createHash('sha1').update(text).digest('base64url').slice(0, 12);
}

function encode(s: StreamRef): SentRef {
  return { ref: s.ref, shown: `${MARK}${s.open ? 'o' : 'c'}:${s.chars}:${s.startedAt}:${s.hash}` };
}

function decode(r: SentRef): StreamRef | null {
  if (!r.shown.startsWith(MARK)) return null;
  const [state, chars, startedAt, hash] = r.shown.slice(MARK.length).split(':');
  if ((state !== 'o' && state !== 'c') || !hash) return null;
  return { ref: r.ref, open: state === 'o', chars: Number(chars), startedAt: Number(startedAt), hash };
}

/** Whether a reference is a native streamed message. */
export function isStreamRef(r: SentRef): boolean {
  return decode(r) !== null;
}

/**
 * Whether a reply's messages stream natively: every message it has is a stream, or it has none
 * yet and the surface offers streams at this address.
 */
export function streamsNatively(surface: Surface, address: unknown, refs: SentRef[]): boolean {
  if (!surface.streams) return false;
  return refs.length > 0 ? refs.every(isStreamRef) : surface.streams.available(address);
}

/** The longest start of `text` within `max` characters that does not cut a surrogate pair. */
function head(text: string, max: number): string {
  if (text.length <= max) return text;
  const end = /[\uD800-\uDBFF]/.test(text[max - 1] ?? '') ? max - 1 : max;
  return text.slice(0, end);
}

/** Arguments of {@link advanceStream}. */
export interface AdvanceArgs {
  surface: Surface;
  address: unknown;
  /** The reply's messages so far; updated in place. */
  refs: SentRef[];
  /** The reply's whole Markdown as it is now. */
  text: string;
  /** The reply's final text: every stream ends stopped. */
  final: boolean;
  /** Persist `refs` (after every platform call, before the next). */
  save: () => Promise<void>;
  /** Confirms the claim right before a stream starts (a new message); throws to stop it. */
  beforeStart?: ConfirmSend;
  now?: () => number;
}

/**
 * Bring a reply's streamed messages up to `text`: append what is new, roll over to a new message
 * when the open one is full or old, and stop the last one when the text is final.
 * @returns 'ok', or 'fallback' when the messages must be edited instead (see the module's note).
 */
export async function advanceStream(args: AdvanceArgs): Promise<'ok' | 'fallback'> {
  const streams = args.surface.streams as NativeStreams;
  const { address, text } = args;
  const now = args.now ?? Date.now;
  const held = args.refs.map(decode);
  if (held.some((s) => s === null)) return 'fallback';
  const list = held as StreamRef[];
  let offset = 0;
  for (const s of list) {
    // A re-run after a crash streams the text again from its start: wait until it is past what is shown.
    if (text.length < offset + s.chars) return args.final ? 'fallback' : 'ok';
    if (hashOf(text.slice(offset, offset + s.chars)) !== s.hash) return 'fallback';
    offset += s.chars;
  }
  const record = async (i: number, s: StreamRef) => {
    args.refs[i] = encode(s);
    await args.save();
  };
  // Where the last message's text begins in `text`.
  let lastStart = offset - (list.at(-1)?.chars ?? 0);
  let rest = text.slice(offset);
  for (;;) {
    const i = list.length - 1;
    const last = list[i];
    // What the open message still takes (nothing when it is full, or a pair would be cut at its end).
    const piece = last?.open ? head(rest, streams.maxChars - last.chars) : '';
    const fresh = last?.open && now() - last.startedAt < streams.rolloverMs && (piece !== '' || !rest);
    if (!last || !fresh) {
      if (last?.open) {
        // Full or old: closed before the platform expires it (an expired one shows its text all the same).
        await streams.stop(address, last.ref);
        await record(i, { ...last, open: false });
      }
      if (!rest) break;
      const first = head(rest, streams.maxChars) || rest.slice(0, streams.maxChars);
      const ref = await streams.start(address, first, args.beforeStart);
      if (ref === null) return 'fallback';
      const started = { ref, open: true, chars: first.length, startedAt: now(), hash: hashOf(first) };
      list.push(started);
      args.refs.push(encode(started));
      await args.save();
      lastStart = offset;
      offset += first.length;
      rest = rest.slice(first.length);
      continue;
    }
    if (!rest) break;
    const closing = args.final && piece.length === rest.length;
    const ok = closing ? await streams.stop(address, last.ref, piece) : await streams.append(address, last.ref, piece);
    if (!ok) return 'fallback';
    offset += piece.length;
    rest = rest.slice(piece.length);
    const chars = last.chars + piece.length;
    const grown = { ...last, open: !closing, chars, hash: hashOf(text.slice(lastStart, lastStart + chars)) };
    list[i] = grown;
    await record(i, grown);
  }
  const last = list.at(-1);
  if (args.final && last?.open) {
    // Everything is shown: a stream that expired meanwhile shows it as well.
    await streams.stop(address, last.ref);
    await record(list.length - 1, { ...last, open: false });
  }
  return 'ok';
}

/**
 * Leave native streaming for a reply's messages: stop a stream still open (refusals ignored —
 * it is edited next) and mark every message as showing nothing yet, so the post-then-edit path
 * edits each to its rendered part.
 */
export async function leaveStreams(surface: Surface, address: unknown, refs: SentRef[], log: Logger): Promise<void> {
  for (const r of refs) {
    const s = decode(r);
    if (s?.open)
      await surface.streams
        ?.stop(address, s.ref)
        .catch((err: unknown) => log.debug({ err }, 'stopping a stream before editing it failed'));
  }
  refs.splice(0, refs.length, ...refs.map((r) => ({ ref: r.ref, shown: '' })));
}
