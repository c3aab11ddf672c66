import { existsSync, mkdirSync, readdirSync, readFileSync, truncateSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { alice, startTelegramTest, stranger, type TelegramTest, texts, waitFor, waitForText } from './setup.js';
import { rejection, sentCopy, sizedUpload } from '../helpers/sent-files.js';

let t: TelegramTest | null = null;
afterEach(async () => {
  await t?.close();
  t = null;
});

const lastUser = (t: TelegramTest) =>
  ((t.llm.chatRequests().at(-1)?.body.messages ?? []) as Array<{ role: string; content: string }>)
    .filter((m) => m.role === 'user')
    .at(-1)?.content ?? '';
const toolResults = (t: TelegramTest) =>
  t.llm
    .chatRequests()
    .flatMap((r) => (r.body.messages as Array<{ role: string; content: string }>).filter((m) => m.role === 'tool'))
    .map((m) => m.content);
/** Every saved upload, relative to `uploads/` (files kept per chat: `telegram/<chat>/<name>`). */
const uploads = (t: TelegramTest) => {
  const dir = path.join(t.dir, 'workspace', 'uploads');
  return existsSync(dir)
    ? readdirSync(dir, { recursive: true, withFileTypes: true })
        .filter((e) => e.isFile())
        .map((e) => path.relative(dir, path.join(e.parentPath, e.name)))
    : [];
};

describe('telegram: attachments', () => {
  it('saves an incoming document under uploads/ and hands its path to the turn', async () => {
    t = await startTelegramTest();
    t.llm.push({ text: 'got your notes' });
    const bytes = Buffer.from('line one\nline two\n');
    t.emu.sendFile(alice, { name: 'notes.txt', bytes, kind: 'document', caption: 'summarize this' });
    await waitForText(t.emu, alice.id, (p) => p === 'got your notes', 'reply');
    const [saved] = uploads(t);
    expect(saved).toMatch(new RegExp(`^telegram/${alice.id}/.*notes\\.txt$`));
    expect(readFileSync(path.join(t.dir, 'workspace', 'uploads', saved as string))).toEqual(bytes);
    expect(lastUser(t)).toContain('summarize this');
    expect(lastUser(t)).toContain(`uploads/${saved}`);
  });

  it('refuses files over 20 MB and over the configured cap with a clear reply, no model call', async () => {
    t = await startTelegramTest({ telegram: { max_download_bytes: 1000 } });
    t.emu.sendFile(alice, {
      name: 'huge.bin',
      bytes: Buffer.from('x'),
      kind: 'document',
      declaredSize: 25 * 1024 * 1024,
    });
    await waitForText(t.emu, alice.id, (p) => p.includes('at most 20 MB'), '20 MB reply');
    t.emu.sendFile(alice, { name: 'mid.bin', bytes: Buffer.alloc(2000, 1), kind: 'document' });
    await waitForText(t.emu, alice.id, (p) => p.includes('accepts files up to'), 'cap reply');
    expect(t.llm.chatRequests()).toHaveLength(0);
    expect(uploads(t)).toEqual([]);
  });

  it('sends workspace files: images as photos, others as documents, caption trimmed, after the text', async () => {
    t = await startTelegramTest();
    const ws = path.join(t.dir, 'workspace');
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 1, 2, 3, 4]);
    writeFileSync(path.join(ws, 'chart.png'), png);
    writeFileSync(path.join(ws, 'data.csv'), 'a,b\n1,2\n');
    writeFileSync(path.join(ws, '.env'), 'SECRET=1\n');
    t.llm.push(
      {
        text: 'Here is the chart.',
        toolCalls: [
          { name: 'send_attachment', arguments: JSON.stringify({ path: 'chart.png', caption: 'c'.repeat(1500) }) },
        ],
      },
      { toolCalls: [{ name: 'send_attachment', arguments: '{"path":"data.csv","caption":"the data"}' }] },
      { toolCalls: [{ name: 'send_attachment', arguments: '{"path":"../outside.txt"}' }] },
      { toolCalls: [{ name: 'send_attachment', arguments: '{"path":".env"}' }] },
      { text: 'all sent' },
    );
    t.emu.sendText(alice, 'send me the files');
    await waitForText(t.emu, alice.id, (p) => p === 'all sent', 'final reply');
    const all = t.emu.messages(alice.id);
    const photo = all.find((m) => m.kind === 'photo');
    const doc = all.find((m) => m.kind === 'document');
    expect(photo?.file?.bytes).toEqual(png);
    expect(photo?.caption).toHaveLength(1024);
    expect(doc?.file?.bytes.toString()).toBe('a,b\n1,2\n');
    expect(doc?.caption).toBe('the data');
    expect(all.filter((m) => m.kind !== 'text')).toHaveLength(2);
    const textIndex = all.findIndex((m) => m.plain === 'Here is the chart.');
    expect(textIndex).toBeGreaterThanOrEqual(0);
    expect(all.indexOf(photo as never)).toBeGreaterThan(textIndex);
    expect(toolResults(t).some((r) => r.includes('../outside.txt') && r.includes('outside'))).toBe(true);
    expect(toolResults(t).some((r) => r.includes('.env') && r.includes('deny rule'))).toBe(true);
  });
});

describe('telegram: a file refused when it is sent, or at upload', () => {
  it('a file gone or a folder gets no copy (nothing is queued); a copy over 50 MB is refused before any upload, for good', async () => {
    t = await startTelegramTest();
    const ws = path.join(t.dir, 'workspace');
    mkdirSync(path.join(ws, 'reports'));
    writeFileSync(path.join(ws, 'huge.zip'), '');
    truncateSync(path.join(ws, 'huge.zip'), 51 * 1024 * 1024);
    const copyRefused = async (name: string) => (await rejection(sentCopy(t!.h.core, name)))?.message;
    expect(await copyRefused('gone.png')).toMatch(/^Cannot read gone\.png: ENOENT/);
    expect(await copyRefused('reports')).toBe('reports is not a regular file');
    expect(await copyRefused('huge.zip')).toBe(
      'huge.zip is 51 MB, over the 50 MB limit (the largest file switchboard sends)',
    );
    const surface = t.channel().surface;
    const err = await rejection(surface.upload({ chatId: alice.id }, sizedUpload('huge.zip', 51 * 1024 * 1024)));
    expect(surface.classify(err)).toMatchObject({ kind: 'permanent' });
    expect(err?.message).toBe("huge.zip is 51 MB, over the 50 MB limit (Telegram's Bot API)");
    expect(t.emu.calls.filter((c) => /^send(Photo|Document|Voice)$/.test(c.method))).toEqual([]);
    expect(t.emu.messages(alice.id)).toEqual([]);
    expect(readdirSync(ws).sort()).toEqual(['huge.zip', 'reports']);
  });
});

describe('telegram: voice', () => {
  it('transcribes an incoming voice note and sends the transcript to the model', async () => {
    t = await startTelegramTest({ overrides: { audio: { transcription_enabled: true } } });
    t.llm.transcript = 'what is the weather';
    t.llm.push({ text: 'sunny' });
    t.emu.sendFile(alice, { name: 'voice.ogg', bytes: Buffer.from('OggS-voice'), kind: 'voice' });
    await waitForText(t.emu, alice.id, (p) => p === 'sunny', 'reply to voice');
    expect(t.llm.requests.filter((r) => r.path.endsWith('/audio/transcriptions'))).toHaveLength(1);
    expect(lastUser(t)).toBe('what is the weather');
    expect(texts(t.emu, alice.id)[0]?.plain).toBe('🎤 what is the weather');
  });

  it('a stranger who sends a voice note and a file gets a pairing code once: nothing is downloaded or transcribed', async () => {
    t = await startTelegramTest({ overrides: { audio: { transcription_enabled: true } } });
    t.emu.sendFile(stranger, { name: 'voice.ogg', bytes: Buffer.from('OggS-voice'), kind: 'voice' });
    t.emu.sendFile(stranger, { name: 'secret.txt', bytes: Buffer.from('data'), kind: 'document' });
    await waitForText(t.emu, stranger.id, (p) => p.includes('pairing code'), 'pairing code');
    await waitFor(() => t?.emu.pendingUpdates().length === 0, 'updates handled');
    // Handled means confirmed; round-trip once more so the last update's handler has finished.
    t.emu.sendText(alice, '/help');
    await waitForText(t.emu, alice.id, (p) => p.startsWith('Commands'), 'help for alice');
    await t.h.core.idle();
    expect(texts(t.emu, stranger.id)).toHaveLength(1);
    expect(t.emu.calls.filter((c) => c.method === 'getFile')).toEqual([]);
    expect(uploads(t)).toEqual([]);
    expect(t.llm.requests.filter((r) => r.path.endsWith('/audio/transcriptions'))).toHaveLength(0);
    expect(t.llm.chatRequests()).toHaveLength(0);
  });

  it('tells the user voice is off when transcription is disabled', async () => {
    t = await startTelegramTest();
    t.emu.sendFile(alice, { name: 'voice.ogg', bytes: Buffer.from('OggS-voice'), kind: 'voice' });
    await waitForText(t.emu, alice.id, (p) => p.includes('Voice messages are off'), 'voice off reply');
    expect(t.llm.requests).toHaveLength(0);
    expect(uploads(t)).toEqual([]);
  });

  it('send_voice_message speaks through the speech endpoint and sends a voice note', async () => {
    t = await startTelegramTest({ overrides: { audio: { speech_enabled: true } } });
    t.llm.push(
      { toolCalls: [{ name: 'send_voice_message', arguments: '{"text":"hello there"}' }] },
      { text: 'said it' },
    );
    t.emu.sendText(alice, 'say hello');
    await waitForText(t.emu, alice.id, (p) => p === 'said it', 'reply');
    const voice = await waitFor(() => t?.emu.messages(alice.id).find((m) => m.kind === 'voice'), 'voice note');
    expect(voice.file?.bytes.toString()).toBe('OggS-fake-opus-audio');
    const speech = t.llm.requests.find((r) => r.path.endsWith('/audio/speech'));
    expect(JSON.stringify(speech?.body)).toContain('hello there');
  });

  it('send_voice_message fails clearly when speech is disabled', async () => {
    t = await startTelegramTest();
    t.llm.push(
      { toolCalls: [{ name: 'send_voice_message', arguments: '{"text":"hello"}' }] },
      { text: 'could not speak' },
    );
    t.emu.sendText(alice, 'say hello');
    await waitForText(t.emu, alice.id, (p) => p === 'could not speak', 'reply');
    expect(t.emu.messages(alice.id).some((m) => m.kind === 'voice')).toBe(false);
    expect(toolResults(t).some((r) => r.includes('speech_enabled is false'))).toBe(true);
  });
});
