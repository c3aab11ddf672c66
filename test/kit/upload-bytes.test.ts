import { describe, expect, it } from 'vitest';
import { uploadBytes } from '../../src/delivery/files.js';
import { refusalCodes } from '../../src/delivery/native-fallback.js';
import type { OutboundUpload } from '../../src/contract/surface.js';

function sentFile(text: string, caption?: string): OutboundUpload & { reads: number } {
  const file = {
    name: 'a.txt',
    size: Buffer.byteLength(text),
    caption,
    kind: 'file' as const,
    snapshot: 's1',
    reads: 0,
    async bytes() {
      file.reads++;
      return Buffer.from(text);
    },
    async *chunks() {
      yield Buffer.from(text);
    },
  };
  return file;
}

describe('uploadBytes', () => {
  it("reads a sent file's copy whole, with its name and caption", async () => {
    const up = await uploadBytes(sentFile('hello', 'see'), { bytes: 10, name: 'x.max' });
    expect({ ...up, bytes: up.bytes.toString() }).toEqual({ name: 'a.txt', bytes: 'hello', caption: 'see' });
  });

  it('makes a text into a file', async () => {
    const up = await uploadBytes({ name: 'args.json', text: '{"a":1}' });
    expect(up.name).toBe('args.json');
    expect(up.bytes.toString()).toBe('{"a":1}');
  });

  it('refuses a file over the limit before reading it, and a text by its bytes', async () => {
    const file = sentFile('0123456789ab');
    await expect(uploadBytes(file, { bytes: 10, name: 'x.max' })).rejects.toMatchObject({ code: 'file_too_big' });
    expect(file.reads).toBe(0);
    await expect(uploadBytes({ name: 't', text: 'ééééééé' }, { bytes: 10, name: 'x.max' })).rejects.toMatchObject({
      code: 'file_too_big',
    });
  });
});

describe('refusalCodes', () => {
  it('says the code of a refusal, and nothing for other errors', () => {
    const refusal = refusalCodes((err) => (err as { code?: string }).code, new Set(['invalid_blocks']));
    expect(refusal({ code: 'invalid_blocks' })).toBe('invalid_blocks');
    expect(refusal({ code: 'ratelimited' })).toBeUndefined();
    expect(refusal({})).toBeUndefined();
  });
});
