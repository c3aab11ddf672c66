/**
 * Reading a line range of a file without loading the whole file: the file is scanned in 1 MB
 * chunks from the nearest known line checkpoint; checkpoints (byte offset of every 8192nd line)
 * are cached per file version, so a second read deep into a large file skips straight there.
 * Memory stays flat: at most one chunk plus the requested lines are held.
 */
import type { FileHandle } from 'node:fs/promises';

const CHUNK = 1 << 20;
const CHECKPOINT_EVERY = 8192;
const CACHE_FILES = 32;

interface Checkpoints {
  size: number;
  mtimeMs: number;
  /** offsets[k] = byte offset where line k*CHECKPOINT_EVERY+1 starts. */
  offsets: number[];
  /** Total lines, once a scan has reached the end. */
  total?: number;
}

const cache = new Map<string, Checkpoints>();

function checkpointsFor(abs: string, size: number, mtimeMs: number): Checkpoints {
  const hit = cache.get(abs);
  if (hit && hit.size === size && hit.mtimeMs === mtimeMs) {
    cache.delete(abs);
    cache.set(abs, hit); // LRU: move to the end
    return hit;
  }
  const fresh: Checkpoints = { size, mtimeMs, offsets: [0] };
  cache.set(abs, fresh);
  if (cache.size > CACHE_FILES) cache.delete(cache.keys().next().value as string);
  return fresh;
}

/** Options of {@link readLineRange}. */
export interface LineRangeOptions {
  /** First line, 1-based. */
  offset: number;
  /** Most lines to return. */
  limit: number;
  /** Stop adding lines once this many bytes of text were collected. */
  maxBytes: number;
  /** Longer lines are cut to this many bytes (the rest is counted, not kept). */
  maxLineBytes: number;
}

/** A read range. */
export interface LineRange {
  /** The lines, without their newline; cut lines end with a marker. */
  lines: string[];
  /** Line number of `lines[0]`. */
  first: number;
  /** True when the byte cap stopped the read before `limit` lines. */
  byteCapped: boolean;
  /** Total line count when the read reached the end of the file. */
  total?: number;
}

/**
 * Read lines `offset .. offset+limit-1` of an open file (it stays open); `key` names it in the
 * checkpoint cache (its real path).
 */
export async function readLineRange(fh: FileHandle, key: string, opts: LineRangeOptions): Promise<LineRange> {
  const st = await fh.stat();
  const cps = checkpointsFor(key, st.size, st.mtimeMs);
  const k = Math.min(Math.floor((opts.offset - 1) / CHECKPOINT_EVERY), cps.offsets.length - 1);
  let pos = cps.offsets[k] as number;
  let line = k * CHECKPOINT_EVERY + 1;
  const buf = Buffer.allocUnsafe(CHUNK);
  const lines: string[] = [];
  let bytes = 0;
  let byteCapped = false;
  let current: Buffer[] = [];
  let currentLen = 0;
  let cut = 0;
  const finishLine = () => {
    let text = Buffer.concat(current, currentLen).toString('utf8');
    if (cut > 0) text += ` … [line cut: ${cut} more bytes]`;
    lines.push(text);
    bytes += currentLen + 1;
    current = [];
    currentLen = 0;
    cut = 0;
  };
  for (;;) {
    const { bytesRead } = await fh.read(buf, 0, CHUNK, pos);
    if (bytesRead === 0) break;
    let start = 0;
    // Fast skip: count newlines until the first wanted line, recording checkpoints on the way.
    while (line < opts.offset) {
      const nl = buf.indexOf(10, start);
      if (nl === -1 || nl >= bytesRead) {
        start = bytesRead;
        break;
      }
      line++;
      start = nl + 1;
      if ((line - 1) % CHECKPOINT_EVERY === 0 && (line - 1) / CHECKPOINT_EVERY === cps.offsets.length) {
        cps.offsets.push(pos + start);
      }
    }
    while (start < bytesRead) {
      const nl = buf.indexOf(10, start);
      const end = nl === -1 || nl >= bytesRead ? bytesRead : nl;
      const take = Math.min(end - start, opts.maxLineBytes - currentLen);
      if (take > 0) {
        current.push(Buffer.from(buf.subarray(start, start + take)));
        currentLen += take;
      }
      cut += end - start - Math.max(take, 0);
      if (end === bytesRead) break; // line continues in the next chunk
      finishLine();
      if (bytes >= opts.maxBytes && line < opts.offset + opts.limit - 1) {
        byteCapped = true;
        return { lines, first: opts.offset, byteCapped };
      }
      line++;
      if ((line - 1) % CHECKPOINT_EVERY === 0 && (line - 1) / CHECKPOINT_EVERY === cps.offsets.length) {
        cps.offsets.push(pos + nl + 1);
      }
      if (line >= opts.offset + opts.limit) return { lines, first: opts.offset, byteCapped };
      start = nl + 1;
    }
    pos += bytesRead;
  }
  // End of file: a last line without a trailing newline still counts.
  const endsWithNewline = st.size === 0 || (await lastByte(fh, st.size)) === 10;
  const inRange = line >= opts.offset && line < opts.offset + opts.limit;
  if (inRange && (currentLen > 0 || cut > 0 || !endsWithNewline)) finishLine();
  const total = endsWithNewline ? line - 1 : line;
  cps.total = total;
  return { lines, first: opts.offset, byteCapped, total };
}

async function lastByte(fh: FileHandle, size: number): Promise<number> {
  const b = Buffer.alloc(1);
  await fh.read(b, 0, 1, size - 1);
  return b[0] as number;
}

/** Split in-memory text into lines the same way {@link readLineRange} does. */
export function rangeOfText(text: string, opts: LineRangeOptions): LineRange {
  const all = text.length === 0 ? [] : text.split('\n');
  if (all.length > 0 && text.endsWith('\n')) all.pop();
  const lines: string[] = [];
  let bytes = 0;
  let byteCapped = false;
  const last = Math.min(all.length, opts.offset - 1 + opts.limit);
  for (let i = opts.offset - 1; i < last; i++) {
    const raw = all[i] as string;
    const len = Buffer.byteLength(raw);
    let shown = raw;
    if (len > opts.maxLineBytes) {
      shown = `${Buffer.from(raw).subarray(0, opts.maxLineBytes).toString('utf8')} … [line cut: ${len - opts.maxLineBytes} more bytes]`;
    }
    lines.push(shown);
    bytes += Math.min(len, opts.maxLineBytes) + 1;
    if (bytes >= opts.maxBytes && i < last - 1) {
      byteCapped = true;
      break;
    }
  }
  return { lines, first: opts.offset, byteCapped, total: all.length };
}
