import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { checkOutboundFile, safeFileName } from '../../src/delivery/files.js';
import { SwitchboardError } from '../../src/errors.js';

describe('safeFileName (one for every channel)', () => {
  it('drops folders, leading dots and odd characters', () => {
    expect(safeFileName('../../etc/passwd')).toBe('passwd');
    expect(safeFileName('C:\\Users\\me\\report final.pdf')).toBe('report_final.pdf');
    expect(safeFileName('.hidden')).toBe('hidden');
    expect(safeFileName('...')).toBe('file');
    expect(safeFileName('')).toBe('file');
  });

  it('keeps the extension of a long name', () => {
    const name = `${'a'.repeat(300)}.pdf`;
    const safe = safeFileName(name);
    expect(safe).toHaveLength(120);
    expect(safe.endsWith('.pdf')).toBe(true);
  });
});

describe('checkOutboundFile (every channel, before an upload)', () => {
  let dir = '';
  afterEach(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
    dir = '';
  });
  /** The folder's names, sizes and contents: a refusal must leave all of it as it was. */
  const snapshot = () =>
    readdirSync(dir, { recursive: true, encoding: 'utf8' })
      .sort()
      .map((name) => {
        const st = statSync(path.join(dir, name));
        return `${name}:${st.isFile() ? `${st.size}:${readFileSync(path.join(dir, name), 'utf8').slice(0, 16)}` : 'dir'}`;
      });
  const refusal = async (file: string, limit?: { bytes: number; name: string }) => {
    const err = await checkOutboundFile(path.join(dir, file), limit).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(SwitchboardError);
    return err as SwitchboardError;
  };

  it('takes a regular file within the limit (the limit itself included): its name and size', async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'outbound-'));
    writeFileSync(path.join(dir, 'report.csv'), 'a,b\n1,2\n');
    expect(await checkOutboundFile(path.join(dir, 'report.csv'), { bytes: 8, name: 'slack.max_upload_bytes' })).toEqual(
      { name: 'report.csv', size: 8 },
    );
    expect(await checkOutboundFile(path.join(dir, 'report.csv'))).toEqual({ name: 'report.csv', size: 8 });
  });

  it('refuses a missing file, a folder and a file over the limit, with words for the person, and changes nothing', async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'outbound-'));
    mkdirSync(path.join(dir, 'reports'));
    writeFileSync(path.join(dir, 'big.bin'), Buffer.alloc(4000, 7));
    // Sparse: 51 MB on paper, nothing on disk.
    writeFileSync(path.join(dir, 'huge.zip'), '');
    truncateSync(path.join(dir, 'huge.zip'), 51 * 1024 * 1024);
    const before = snapshot();

    const missing = await refusal('gone.txt', { bytes: 1000, name: 'slack.max_upload_bytes' });
    expect(missing.code).toBe('file_missing');
    expect(missing.message).toMatch(/^Cannot read gone\.txt: ENOENT/);

    const folder = await refusal('reports');
    expect(folder.code).toBe('file_invalid');
    expect(folder.message).toBe('reports is not a regular file');

    const big = await refusal('big.bin', { bytes: 2000, name: 'slack.max_upload_bytes' });
    expect(big.code).toBe('file_too_big');
    expect(big.message).toBe('big.bin is 4 KB, over the 2 KB limit (slack.max_upload_bytes)');
    const huge = await refusal('huge.zip', { bytes: 50 * 1024 * 1024, name: "Telegram's Bot API" });
    expect(huge.message).toBe("huge.zip is 51 MB, over the 50 MB limit (Telegram's Bot API)");

    expect(snapshot()).toEqual(before);
  });
});
