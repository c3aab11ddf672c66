/** Images to the model over the Telegram emulator: photos as image parts, auto vs a refusing endpoint, off, bad images. */
import { deflateSync } from 'node:zlib';
import sharp from 'sharp';
import { afterEach, describe, expect, it } from 'vitest';
import { alice, startTelegramTest, type TelegramTest, texts, waitFor, waitForText } from './setup.js';

let t: TelegramTest | null = null;
afterEach(async () => {
  await t?.close();
  t = null;
});

const MAX = 1_048_576;
type Part = { type: string; text?: string; image_url?: { url: string } };
const lastUser = (body: any) =>
  (body.messages as Array<{ role: string; content: string | Part[] }>).filter((m) => m.role === 'user').at(-1)?.content;
const imageParts = (body: any): Part[] =>
  body.messages.flatMap((m: any) =>
    Array.isArray(m.content) ? m.content.filter((p: Part) => p.type === 'image_url') : [],
  );

/** A 3000 × 2000 photo with EXIF data (a camera's, say). */
const photo = () =>
  sharp({ create: { width: 3000, height: 2000, channels: 3, background: { r: 200, g: 30, b: 30 } } })
    .jpeg()
    .withExif({ IFD0: { Copyright: 'secret-owner', Artist: 'someone' } })
    .toBuffer();

/** A PNG whose header claims 60 000 × 60 000 pixels (a decompression bomb). */
function bombPng(): Buffer {
  const crcTable = Array.from({ length: 256 }, (_, n) => {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    return c >>> 0;
  });
  const crc = (buf: Buffer) => {
    let c = 0xffffffff;
    for (const b of buf) c = (crcTable[(c ^ b) & 0xff] as number) ^ (c >>> 8);
    return (c ^ 0xffffffff) >>> 0;
  };
  const chunk = (type: string, data: Buffer) => {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(data.length);
    const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
    const sum = Buffer.alloc(4);
    sum.writeUInt32BE(crc(body));
    return Buffer.concat([len, body, sum]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(60_000, 0);
  ihdr.writeUInt32BE(60_000, 4);
  ihdr.set([8, 2, 0, 0, 0], 8);
  return Buffer.concat([
    Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]),
    chunk('IHDR', ihdr),
    chunk('IDAT', deflateSync(Buffer.alloc(100))),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

describe('telegram: images to the model', () => {
  it('a photo with a caption reaches the model as an image part with the caption, decodable, within the pixel cap, without metadata', async () => {
    t = await startTelegramTest();
    t.llm.push({ text: 'a red square' });
    t.emu.sendFile(alice, { name: 'p.jpg', bytes: await photo(), kind: 'photo', caption: 'what is this?' });
    await waitForText(t.emu, alice.id, (p) => p === 'a red square', 'reply');
    const body = t.llm.chatRequests()[0]?.body;
    const content = lastUser(body) as Part[];
    expect(Array.isArray(content)).toBe(true);
    expect(content[0]?.type).toBe('text');
    expect(content[0]?.text).toMatch(/^what is this\?/);
    const url = content[1]?.image_url?.url ?? '';
    expect(url).toMatch(/^data:image\/jpeg;base64,/);
    const meta = await sharp(Buffer.from(url.slice(url.indexOf(',') + 1), 'base64')).metadata();
    expect((meta.width ?? 0) * (meta.height ?? 0)).toBeLessThanOrEqual(MAX);
    expect(meta.width).toBeGreaterThan(1000);
    expect(meta.exif).toBeUndefined();
  });

  it('auto: an endpoint refusing image content is asked again without it, the chat is told once, and the model is remembered', async () => {
    t = await startTelegramTest();
    t.llm.setHandler((body) =>
      imageParts(body).length
        ? {
            status: 400,
            body: {
              error: {
                message: 'Invalid content type. image_url is only supported by certain models.',
                type: 'invalid_request_error',
              },
            },
          }
        : { text: 'I read the text only' },
    );
    t.emu.sendFile(alice, { name: 'p.jpg', bytes: await photo(), kind: 'photo', caption: 'look at this' });
    await waitForText(t.emu, alice.id, (p) => p === 'I read the text only', 'reply');
    await waitForText(t.emu, alice.id, (p) => p.includes('This model (test-model) cannot see images'), 'the notice');
    const second = t.llm.chatRequests()[1]?.body;
    expect(lastUser(second)).toContain('look at this');
    expect(imageParts(second)).toEqual([]);
    t.emu.sendFile(alice, { name: 'q.jpg', bytes: await photo(), kind: 'photo', caption: 'and this one' });
    await waitFor(
      () => texts(t!.emu, alice.id).filter((m) => m.plain === 'I read the text only').length === 2,
      'second reply',
    );
    // Remembered: no second refused request, no second notice.
    expect(t.llm.chatRequests()).toHaveLength(3);
    expect(texts(t.emu, alice.id).filter((m) => m.plain.includes('cannot see images'))).toHaveLength(1);
  });

  it('llm.vision_model describes the images in text for a model that refused them; the description goes into the conversation', async () => {
    t = await startTelegramTest({ overrides: { llm: { vision_model: 'eye-model' } } });
    t.llm.setHandler((body) => {
      if (body.model === 'eye-model') return { text: 'A red rectangle with no text in it.' };
      if (imageParts(body).length)
        return { status: 400, body: { error: { message: 'This model does not support image inputs.' } } };
      return { text: 'understood' };
    });
    t.emu.sendFile(alice, { name: 'p.jpg', bytes: await photo(), kind: 'photo', caption: 'what is it?' });
    await waitForText(t.emu, alice.id, (p) => p === 'understood', 'reply');
    await waitForText(
      t.emu,
      alice.id,
      (p) => p.includes('cannot see images; it gets descriptions of them by eye-model'),
      'the notice',
    );
    const main = t.llm
      .chatRequests()
      .map((r) => r.body)
      .filter((b) => b.model !== 'eye-model');
    const eye = t.llm
      .chatRequests()
      .map((r) => r.body)
      .filter((b) => b.model === 'eye-model');
    expect(eye).toHaveLength(1);
    expect(imageParts(eye[0])).toHaveLength(1);
    expect(lastUser(main.at(-1))).toMatch(
      /^what is it\?[\s\S]*\[An image, described: A red rectangle with no text in it\.\]$/,
    );
    expect(imageParts(main.at(-1))).toEqual([]);
  });

  it('llm.vision = off sends no image part', async () => {
    t = await startTelegramTest({ overrides: { llm: { vision: 'off' } } });
    t.llm.push({ text: 'ok' });
    t.emu.sendFile(alice, { name: 'p.jpg', bytes: await photo(), kind: 'photo', caption: 'what is this?' });
    await waitForText(t.emu, alice.id, (p) => p === 'ok', 'reply');
    const body = t.llm.chatRequests()[0]?.body;
    expect(imageParts(body)).toEqual([]);
    expect(lastUser(body)).toMatch(/^what is this\?\n\n\[Files the user sent, in the workspace: uploads\/.*\.jpg\]$/);
  });

  it.each([
    [
      'corrupt bytes',
      'broken.jpg',
      () => Promise.resolve(Buffer.from('this is not a jpeg at all')),
      'it is not a readable image',
    ],
    [
      'a decompression bomb',
      'bomb.png',
      () => Promise.resolve(bombPng()),
      'its dimensions are too large to decode safely',
    ],
  ])(
    '%s: not sent, the user is told in one line, the caption still reaches the model',
    async (_what, name, bytes, reason) => {
      t = await startTelegramTest();
      t.llm.push({ text: 'caption seen' });
      t.emu.sendFile(alice, { name, bytes: await bytes(), kind: 'document', caption: 'please check' });
      await waitForText(t.emu, alice.id, (p) => p === 'caption seen', 'reply');
      await waitForText(t.emu, alice.id, (p) => p.includes(`was not sent to the model: ${reason}.`), 'the notice');
      const body = t.llm.chatRequests()[0]?.body;
      expect(imageParts(body)).toEqual([]);
      const text = lastUser(body) as string;
      expect(text).toMatch(/^please check/);
      expect(text).toContain(`was not shown: ${reason}]`);
    },
  );
});
