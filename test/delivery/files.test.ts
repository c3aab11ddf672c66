import { describe, expect, it } from 'vitest';
import { safeFileName } from '../../src/delivery/files.js';

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
