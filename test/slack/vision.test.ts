/** Images to the model over the Slack emulator: an image file shared with a message is an image part of it. */
import sharp from 'sharp';
import { afterEach, describe, expect, it } from 'vitest';
import { ALICE, type SlackStack, startSlackStack, waitFor } from './stack.js';

type Part = { type: string; text?: string; image_url?: { url: string } };

describe('Slack: images to the model', () => {
  let stack: SlackStack;
  afterEach(async () => {
    await stack?.close();
  });

  it('an image file with a message reaches the model as an image part with the text, within the pixel cap', async () => {
    stack = await startSlackStack('http', { overrides: { llm: { vision_max_pixels: 250_000 } } });
    stack.llm.push({ text: 'a blue rectangle' });
    const png = await sharp({ create: { width: 1600, height: 900, channels: 3, background: { r: 0, g: 0, b: 255 } } })
      .png()
      .toBuffer();
    const file = stack.emu.hostFile('diagram.png', png, 'image/png');
    await stack.sendEvent(
      stack.emu.userMessage({ channel: 'D1', user: ALICE, text: 'what does this show?', files: [file] }),
    );
    await waitFor(() => stack.findBot('D1', 'a blue rectangle').length, 'reply');
    const user = (stack.llm.chatRequests()[0]!.body.messages as Array<{ role: string; content: string | Part[] }>)
      .filter((m) => m.role === 'user')
      .at(-1);
    const parts = user?.content as Part[];
    expect(parts[0]?.text).toMatch(/^what does this show\?/);
    const url = parts[1]?.image_url?.url ?? '';
    expect(url).toMatch(/^data:image\/jpeg;base64,/);
    const meta = await sharp(Buffer.from(url.slice(url.indexOf(',') + 1), 'base64')).metadata();
    expect((meta.width ?? 0) * (meta.height ?? 0)).toBeLessThanOrEqual(250_000);
    expect(meta.width).toBeGreaterThan(600);
  });
});
