/**
 * File helpers shared by the file tools: hashing, binary sniffing and atomic writes
 * (temp file in the same folder, fsync, rename), keeping the file mode.
 */
import { createHash, randomBytes } from 'node:crypto';
import { constants, promises as fs } from 'node:fs';
import path from 'node:path';

/** Hex sha256 of a buffer or string. */
export function sha256(data: Buffer | string): string {
  return createHash('sha256').update(data).digest('hex');
}

/** Hex sha256 of a file, streamed (for files too large to read whole). */
export async function sha256File(abs: string): Promise<string> {
  const hash = createHash('sha256');
  const fh = await fs.open(abs, 'r');
  try {
    for await (const chunk of fh.createReadStream()) hash.update(chunk as Buffer);
  } finally {
    await fh.close();
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

/** Read the first bytes of a file. */
export async function readHead(abs: string, bytes = SNIFF_BYTES): Promise<Buffer> {
  const fh = await fs.open(abs, 'r');
  try {
    const buf = Buffer.alloc(bytes);
    const { bytesRead } = await fh.read(buf, 0, bytes, 0);
    return buf.subarray(0, bytesRead);
  } finally {
    await fh.close();
  }
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

/** Existing file facts, or null when the path does not exist. */
export async function statOrNull(abs: string): Promise<import('node:fs').Stats | null> {
  try {
    return await fs.stat(abs);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}

/** Options of {@link atomicWrite}. */
export interface AtomicWriteOptions {
  /** Fail with EEXIST instead of replacing an existing file (used by `create`). */
  noClobber?: boolean;
  /** File mode for the result; defaults to the existing file's mode, else 0o644 (minus umask). */
  mode?: number;
}

/**
 * Write `data` to `abs` atomically: a temp file in the same folder is written and fsynced, then
 * renamed over the target (or hard-linked when `noClobber`, which fails if the target appeared),
 * then the folder is fsynced. Readers never see a half-written file. Parents must exist.
 */
export async function atomicWrite(abs: string, data: Buffer | string, options: AtomicWriteOptions = {}): Promise<void> {
  const dir = path.dirname(abs);
  const tmp = path.join(dir, `.${path.basename(abs)}.${randomBytes(6).toString('hex')}.tmp`);
  let mode = options.mode;
  if (mode === undefined) {
    const st = await statOrNull(abs);
    if (st) mode = st.mode & 0o7777;
  }
  const fh = await fs.open(tmp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, mode ?? 0o644);
  try {
    try {
      await fh.writeFile(data);
      // open() applies the umask; chmod sets the kept mode exactly.
      if (mode !== undefined) await fh.chmod(mode);
      await fh.sync();
    } finally {
      await fh.close();
    }
    if (options.noClobber) {
      await fs.link(tmp, abs);
      await fs.unlink(tmp);
    } else {
      await fs.rename(tmp, abs);
    }
  } catch (err) {
    await fs.rm(tmp, { force: true });
    throw err;
  }
  await syncDir(dir);
}

async function syncDir(dir: string): Promise<void> {
  try {
    const dh = await fs.open(dir, 'r');
    try {
      await dh.sync();
    } finally {
      await dh.close();
    }
  } catch {
    // Some filesystems refuse fsync on a directory; the rename itself is still atomic.
  }
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
