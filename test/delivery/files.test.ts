import { describe, expect, it } from 'vitest';
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

describe('checkOutboundFile (every channel, before an upload of the copy taken when sent)', () => {
  it('takes a file within the limit (the limit itself included): its name and size', () => {
    const file = { name: 'report.csv', size: 8 };
    expect(checkOutboundFile(file, { bytes: 8, name: 'slack.max_upload_bytes' })).toEqual({
      name: 'report.csv',
      size: 8,
    });
    expect(checkOutboundFile(file)).toEqual({ name: 'report.csv', size: 8 });
  });

  it('refuses a file over the limit, with words for the person', () => {
    const refusal = (file: { name: string; size: number }, limit: { bytes: number; name: string }) => {
      try {
        checkOutboundFile(file, limit);
      } catch (err) {
        expect(err).toBeInstanceOf(SwitchboardError);
        return err as SwitchboardError;
      }
      throw new Error('not refused');
    };
    const big = refusal({ name: 'big.bin', size: 4000 }, { bytes: 2000, name: 'slack.max_upload_bytes' });
    expect(big.code).toBe('file_too_big');
    expect(big.message).toBe('big.bin is 4 KB, over the 2 KB limit (slack.max_upload_bytes)');
    const huge = refusal(
      { name: 'huge.zip', size: 51 * 1024 * 1024 },
      { bytes: 50 * 1024 * 1024, name: "Telegram's Bot API" },
    );
    expect(huge.message).toBe("huge.zip is 51 MB, over the 50 MB limit (Telegram's Bot API)");
  });
});
