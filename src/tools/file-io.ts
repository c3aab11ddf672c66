/**
 * File helpers shared by the file tools: hashing and binary sniffing of files opened through
 * `confined/` (atomic writes are `confined/write.ts`).
 */
import { createHash } from 'node:crypto';
import type { FileHandle } from 'node:fs/promises';

/** Hex sha256 of a buffer or string. */
export function sha256(data: Buffer | string): string {
  return createHash('sha256').update(data).digest('hex');
}

/** Hex sha256 of an open file, read in chunks from its start (for files too large to hold). */
export async function sha256File(fh: FileHandle): Promise<string> {
  const hash = createHash('sha256');
  const buf = Buffer.allocUnsafe(1 << 20);
  for (let pos = 0; ; ) {
    const { bytesRead } = await fh.read(buf, 0, buf.length, pos);
    if (bytesRead === 0) break;
    hash.update(buf.subarray(0, bytesRead));
    pos += bytesRead;
  }
  return hash.digest('hex');
}

/** Bytes sniffed to decide whether a file is binary. */
export const SNIFF_BYTES = 8192;

/**
 * True when the bytes look binary: a NUL byte, or invalid UTF-8 (a cut at the end of the
 * sample is allowed, since the sample may end mid-character).
 */
export function looksBinary(sample: Buffer): boolean {
  if (sample.includes(0)) return true;
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(trimPartialUtf8(sample));
    return false;
  } catch {
    return true;
  }
}

function trimPartialUtf8(buf: Buffer): Buffer {
  // Drop up to 3 trailing bytes of an incomplete multi-byte sequence.
  for (let back = 1; back <= Math.min(3, buf.length); back++) {
    const byte = buf[buf.length - back] as number;
    if ((byte & 0xc0) === 0x80) continue; // continuation byte: keep looking for the lead
    if (byte >= 0xc0) {
      const need = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : 2;
      return need > back ? buf.subarray(0, buf.length - back) : buf;
    }
    return buf;
  }
  return buf;
}

/** Read the first bytes of an open file. */
export async function readHead(fh: FileHandle, bytes = SNIFF_BYTES): Promise<Buffer> {
  const buf = Buffer.alloc(bytes);
  const { bytesRead } = await fh.read(buf, 0, bytes, 0);
  return buf.subarray(0, bytesRead);
}

/** A short description of a binary file, for the refusal message. */
export function describeBinary(sample: Buffer): string {
  const magic: [number[], string][] = [
    [[0x89, 0x50, 0x4e, 0x47], 'PNG image'],
    [[0xff, 0xd8, 0xff], 'JPEG image'],
    [[0x47, 0x49, 0x46, 0x38], 'GIF image'],
    [[0x25, 0x50, 0x44, 0x46], 'PDF document'],
    [[0x50, 0x4b, 0x03, 0x04], 'ZIP archive (or docx/xlsx/jar)'],
    [[0x1f, 0x8b], 'gzip data'],
    [[0x7f, 0x45, 0x4c, 0x46], 'ELF executable'],
    [[0x53, 0x51, 0x4c, 0x69, 0x74, 0x65], 'SQLite database'],
  ];
  for (const [bytes, name] of magic) {
    if (bytes.every((b, i) => sample[i] === b)) return name;
  }
  return 'binary data';
}

/** Count UTF-8 lines (a trailing newline does not start a new line). */
export function countLines(text: string): number {
  if (text.length === 0) return 0;
  let n = 1;
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) n++;
  return text.endsWith('\n') ? n - 1 : n;
}

/** 1-based line number of the character at `index`. */
export function lineAt(text: string, index: number): number {
  let n = 1;
  for (let i = text.indexOf('\n'); i !== -1 && i < index; i = text.indexOf('\n', i + 1)) n++;
  return n;
}
