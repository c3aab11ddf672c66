/**
 * What the core does with a platform message once its channel translated it (`core.receive`):
 * who is let in, what is downloaded or transcribed, and what the sender is told — in a direct
 * chat as a row of the chat, in a shared chat as a whisper where the surface can, posted in the
 * chat where it cannot. The files come from a real HTTP server on 127.0.0.1 through the shared
 * download (`delivery/files.ts`), the transcription from the scripted model's endpoint.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { Token } from 'marked';
import { afterEach, beforeAll, afterAll, describe, expect, it, vi } from 'vitest';
import type { Channel, ChannelCapability } from '../../src/contract/channel.js';
import type { ChatRef, IncomingFile, ReceivedMessage } from '../../src/contract/chat.js';
import type { Part } from '../../src/contract/surface.js';
import { downloadUpload, UploadRefused } from '../../src/delivery/files.js';
import { THREAD_PRELUDE_CHARS, threadPrelude } from '../../src/core/reception.js';
import { PathPolicy } from '../../src/tools/path-policy.js';
import type { Conversation } from '../../src/store/schema.js';
import { FakeSurface } from '../delivery/fake-surface.js';
import { type ConfigOverrides, type Harness, startHarness, waitFor } from '../helpers/harness.js';

/** A surface that records where each message went, and whispers when `canWhisper`. */
class ChatSurface extends FakeSurface {
  readonly posted: Array<{ at: string; text: string }> = [];
  readonly whispered: Array<{ at: string; to: string; text: string }> = [];

  constructor(canWhisper: boolean) {
    super(10, 10_000);
    // Markdown as a person reads it: the raw text without its backslash escapes.
    const plain = (tokens: Token[]) =>
      tokens
        .map((t) => ('raw' in t ? String(t.raw) : ''))
        .join('')
        .trim()
        .replace(/\\([\\`*_{}[\]()#+\-.!<>|~])/g, '$1');
    this.emitter.markdown = (tokens, title, buttons) => {
      const labels = buttons
        ?.flat()
        .map((b) => `[${b.label}]`)
        .join(' ');
      const text = [title, plain(tokens), labels].filter(Boolean).join('\n');
      return [{ body: { text }, text }];
    };
    if (canWhisper) {
      this.whisper = async (at: string, to: string, part: Part) => {
        if (this.refusing) return false;
        this.whispered.push({ at, to, text: part.text });
        return true;
      };
      this.addressOf = (ref: ChatRef) => `${ref.chatKey}/${ref.threadKey ?? ''}`;
    }
  }

  /** The surface cannot whisper after all (a server that refused it): whispers answer false. */
  refusing = false;
  whisper?: (at: string, to: string, part: Part) => Promise<boolean>;
  addressOf?: (ref: ChatRef) => string;

  override address(conv?: Conversation): string {
    return `${conv?.chat_key}/${conv?.thread_key}`;
  }

  override async post(at: string, part: Part): Promise<string> {
    this.posted.push({ at, text: part.text });
    return super.post(at, part);
  }

  /** Texts posted in one chat (`chatKey/threadKey`). */
  postedIn(at: string): string[] {
    return this.posted.filter((p) => p.at === at).map((p) => p.text);
  }
}

/** A platform channel over a {@link ChatSurface}; direct chats of user `x` are `dm-x`. */
class ChatChannel implements Channel {
  readonly capabilities: ReadonlySet<ChannelCapability> = new Set<ChannelCapability>(['attachments', 'voice']);
  readonly surface: ChatSurface;

  constructor(
    readonly name: string,
    canWhisper: boolean,
  ) {
    this.surface = new ChatSurface(canWhisper);
  }

  async start(): Promise<void> {}
  async stop(): Promise<void> {}

  directChat(userId: string): ChatRef {
    return { channel: this.name, chatKey: `dm-${userId}`, threadKey: '' };
  }
}

/** Files served to the download: name → bytes (a missing name answers 404), every request counted. */
const served = new Map<string, Buffer>();
const fetched: string[] = [];
let fileServer: http.Server;
let fileRoot = '';

beforeAll(async () => {
  fileServer = http.createServer((req, res) => {
    const name = decodeURIComponent((req.url ?? '/').slice(1));
    fetched.push(name);
    const bytes = served.get(name);
    if (!bytes) {
      res.writeHead(404).end('no such file');
      return;
    }
    res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(bytes);
  });
  await new Promise<void>((resolve) => fileServer.listen(0, '127.0.0.1', resolve));
  fileRoot = `http://127.0.0.1:${(fileServer.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((resolve) => fileServer.close(resolve));
});

let h: Harness | null = null;
let chat: ChatChannel;
let plain: ChatChannel;
afterEach(async () => {
  await h?.close();
  h = null;
  served.clear();
  fetched.length = 0;
});

async function start(overrides: ConfigOverrides = {}, maxBytes = 1000): Promise<Harness> {
  chat = new ChatChannel('test', true);
  plain = new ChatChannel('plain', false);
  h = await startHarness({
    channels: () => [chat, plain],
    overrides: {
      ...overrides,
      access: { allowed_users: ['test:u1', 'plain:u1'], admins: ['test:boss'], ...overrides.access },
    },
  });
  limit = maxBytes;
  return h;
}
let limit = 1000;

/** A file the platform serves at `name`, downloaded by the shared download within the cap. */
function file(name: string, declaredSize?: number): IncomingFile {
  const paths = h!.core.paths;
  return {
    name,
    fetch: (folder) =>
      downloadUpload({
        url: `${fileRoot}/${encodeURIComponent(name)}`,
        paths,
        folder,
        name,
        maxBytes: limit,
        declaredSize,
      }),
  };
}

let seq = 0;
function message(over: Partial<ReceivedMessage> & { userId: string }): ReceivedMessage {
  seq++;
  return {
    channel: 'test',
    chatKey: `dm-${over.userId}`,
    threadKey: '',
    text: '',
    direct: true,
    dedupKey: `test:update:${seq}`,
    ...over,
  };
}

/** Every saved upload, relative to `uploads/` (files kept per chat: `<channel>/<chat>/<name>`). */
const uploads = () => {
  const dir = path.join(h!.dir, 'workspace', 'uploads');
  return existsSync(dir)
    ? readdirSync(dir, { recursive: true, withFileTypes: true })
        .filter((e) => e.isFile())
        .map((e) => path.relative(dir, path.join(e.parentPath, e.name)))
    : [];
};
const userTexts = () =>
  h!.llm
    .chatRequests()
    .flatMap((r) =>
      (r.body.messages as Array<{ role: string; content: unknown }>)
        .filter((m) => m.role === 'user')
        .map((m) => JSON.stringify(m.content)),
    );
const transcriptions = () => h!.llm.requests.filter((r) => r.path.endsWith('/audio/transcriptions'));

describe('core.receive: strangers', () => {
  it('an approved pairing settles the request in the approver’s direct chat: who was let in, by whom (the core’s name), no button', async () => {
    await start();
    const asked = await h!.core.receive(message({ userId: 'x7', text: 'hello?' }));
    const code = (asked as { code: string }).code;
    await waitFor(() => chat.surface.postedIn('dm-boss/').length, 'the admin is asked');
    await h!.core.names.remember('test:boss', 'Big Boss');
    expect(await h!.core.approvePairing(code, 'test:boss')).toMatchObject({ ok: true, userId: 'x7' });
    await h!.core.idle();
    await waitFor(
      () => chat.surface.shown().includes('✅ Paired test user `x7` (by Big Boss).'),
      'the request settled',
    );
    expect(chat.surface.shown().filter((t) => t.includes('Pairing request'))).toEqual([]);
    // The request was edited, not answered with a message of its own.
    expect(chat.surface.postedIn('dm-boss/')).toHaveLength(1);
  });

  it('a stranger gets a pairing code and nothing else: no download, no transcription; the admins are asked once, with a button', async () => {
    await start({ audio: { transcription_enabled: true } });
    served.set('secret.txt', Buffer.from('data'));
    served.set('voice.ogg', Buffer.from('OggS'));
    const first = await h!.core.receive(
      message({ userId: 'x9', text: 'let me in', files: [file('secret.txt')], voice: file('voice.ogg') }),
    );
    expect(first).toMatchObject({ status: 'pairing_required', isNew: true });
    const code = (first as { code: string }).code;
    await waitFor(() => chat.surface.postedIn('dm-boss/').length, 'the admin is asked');
    await h!.core.idle();
    expect(chat.surface.postedIn('dm-x9/')).toEqual([expect.stringContaining(`Your pairing code is \`${code}\``)]);
    expect(chat.surface.postedIn('dm-boss/')).toEqual([
      `🔑 Pairing request \`${code}\` from chat \`dm-x9\`.\n[✅ Approve ${code}]`,
    ]);
    expect(fetched).toEqual([]);
    expect(uploads()).toEqual([]);
    expect(transcriptions()).toHaveLength(0);
    expect(h!.llm.chatRequests()).toHaveLength(0);

    // Asking again (a sticker: no text at all) tells nobody anything new.
    expect(await h!.core.receive(message({ userId: 'x9' }))).toMatchObject({
      status: 'pairing_required',
      isNew: false,
    });
    await h!.core.idle();
    expect(chat.surface.posted).toHaveLength(2);

    // Once approved, exactly one welcome.
    expect(await h!.core.approvePairing(code, 'test:boss')).toMatchObject({ ok: true, userId: 'x9' });
    await h!.core.sweep();
    await h!.core.idle();
    expect(chat.surface.postedIn('dm-x9/').filter((t) => t.includes("You're in"))).toHaveLength(1);
  });

  it('in a shared chat the code is whispered to the stranger alone where the surface can, and posted in the chat where not', async () => {
    await start();
    await h!.core.receive(message({ userId: 'x8', chatKey: 'C1', threadKey: '17.5', direct: false, text: 'hi bot' }));
    await h!.core.receive(message({ channel: 'plain', userId: 'x8', chatKey: 'G1', direct: false, text: 'hi bot' }));
    await h!.core.idle();
    expect(chat.surface.whispered).toEqual([
      { at: 'C1/17.5', to: 'x8', text: expect.stringContaining('pairing code') },
    ]);
    expect(chat.surface.postedIn('C1/17.5')).toEqual([]);
    // No conversation is made for the thread a stranger wrote in.
    expect(await h!.core.findConversation({ channel: 'test', chatKey: 'C1', threadKey: '17.5' })).toBeUndefined();
    expect(plain.surface.postedIn('G1/')).toEqual([expect.stringContaining('pairing code')]);
    // Admins are asked on their own channel only (`test:boss` on `test`).
    expect(plain.surface.posted.filter((p) => p.text.includes('Pairing request'))).toEqual([]);
  });

  it('a whisper the surface cannot show after all (its server refused it) is posted in the chat', async () => {
    await start();
    chat.surface.refusing = true;
    await h!.core.receive(message({ userId: 'x7', chatKey: 'C3', threadKey: '', direct: false, text: 'hi bot' }));
    await h!.core.idle();
    expect(chat.surface.whispered).toEqual([]);
    expect(chat.surface.postedIn('C3/')).toEqual([expect.stringContaining('pairing code')]);
  });
});

describe('core.receive: the one way in decides access, names and duplicates once', () => {
  /** User messages written for `principal`: still queued in the inbox, then in the log. */
  const stored = async (principal: string) => {
    const db = h!.core.db;
    const inbox = await db
      .selectFrom('inbox')
      .select('text')
      .where('author_id', '=', principal)
      .where('consumed_at', 'is', null)
      .execute();
    const log = await db.selectFrom('messages').select('content').where('author_id', '=', principal).execute();
    return [...inbox.map((r) => r.text), ...log.map((r) => r.content)];
  };

  it('a stranger is refused once: one pairing code told, one request to the admins, nothing stored', async () => {
    await start();
    const m = message({ userId: 'x5', text: 'let me in' });
    // The same update twice at once (a retry racing the first delivery), then a new message.
    const both = await Promise.all([h!.core.receive(m), h!.core.receive(m)]);
    expect(both.map((r) => r?.status).sort()).toEqual(['duplicate', 'pairing_required']);
    expect(await h!.core.receive(message({ userId: 'x5', text: 'hello?' }))).toMatchObject({
      status: 'pairing_required',
      isNew: false,
    });
    await h!.core.idle();
    expect(chat.surface.postedIn('dm-x5/')).toEqual([expect.stringContaining('Your pairing code is')]);
    expect(chat.surface.postedIn('dm-boss/')).toEqual([expect.stringContaining('Pairing request')]);
    const codes = await h!.core.db.selectFrom('pairing_codes').select('code').where('user_id', '=', 'x5').execute();
    expect(codes).toHaveLength(1);
    expect(await stored('test:x5')).toEqual([]);
    expect(h!.llm.chatRequests()).toHaveLength(0);
  });

  it('a key delivered twice at once is one message, answered once; with files too (the stored key decides)', async () => {
    await start();
    h!.llm.setHandler(() => ({ text: 'ok' }));
    const text = message({ userId: 'u1', text: 'once please' });
    const results = await Promise.all([h!.core.receive(text), h!.core.receive(text), h!.core.receive(text)]);
    expect(results.map((r) => r?.status).sort()).toEqual(['duplicate', 'duplicate', 'queued']);
    await h!.core.idle();
    served.set('b.txt', Buffer.from('b'));
    const withFile = message({ userId: 'u1', text: 'and this', files: [file('b.txt')] });
    const racing = await Promise.all([h!.core.receive(withFile), h!.core.receive(withFile)]);
    expect(racing.map((r) => r?.status).sort()).toEqual(['duplicate', 'queued']);
    await h!.core.idle();
    expect(await stored('test:u1')).toEqual([
      'once please',
      expect.stringMatching(/^and this\n\n.*uploads\/test\/dm-u1\/.*-b\.txt/s),
    ]);
    // One answer per message; the model's last request holds each message once.
    expect(chat.surface.postedIn('dm-u1/')).toEqual(['ok', 'ok']);
    const last = h!.llm.chatRequests().at(-1)!.body.messages as Array<{ role: string; content: unknown }>;
    expect(last.filter((x) => x.role === 'user').map((x) => JSON.stringify(x.content))).toEqual([
      '"once please"',
      expect.stringContaining('and this'),
    ]);
  });

  it("a sender's name is remembered once per message, let in or not", async () => {
    await start();
    h!.llm.setHandler(() => ({ text: 'ok' }));
    const remember = vi.spyOn(h!.core.names, 'remember');
    await h!.core.receive(message({ userId: 'u1', userName: 'Uma One', text: 'hi' }));
    await h!.core.receive(message({ userId: 'x4', userName: 'Xena', text: 'hi' }));
    expect(remember.mock.calls).toEqual([
      ['test:u1', 'Uma One'],
      ['test:x4', 'Xena'],
    ]);
    expect(await h!.core.names.lookup('test:x4')).toBe('Xena');
    const asked = await h!.core.db
      .selectFrom('pairing_codes')
      .select('display_name')
      .where('user_id', '=', 'x4')
      .execute();
    expect(asked).toEqual([{ display_name: 'Xena' }]);
    await h!.core.idle();
  });
});

describe('core.receive: the flood limit', () => {
  it('answers a flood with one notice, whispered in a shared chat', async () => {
    await start({ access: { rate_limit_per_minute: 1 } });
    h!.llm.setHandler(() => ({ text: 'ok' }));
    const results = [];
    for (let i = 0; i < 4; i++)
      results.push(
        await h!.core.receive(message({ userId: 'u1', chatKey: 'C2', threadKey: '1.0', direct: false, text: `m${i}` })),
      );
    await h!.core.idle();
    expect(results.map((r) => r?.status)).toEqual(['queued', 'rate_limited', 'rate_limited', 'rate_limited']);
    expect(chat.surface.whispered).toEqual([
      {
        at: 'C2/1.0',
        to: 'u1',
        text: expect.stringMatching(/too fast: this one and any you send in the next \d+ s are dropped/),
      },
    ]);
    expect(chat.surface.posted.some((p) => p.text.includes('too fast'))).toBe(false);
  });
});

describe('core.receive: files', () => {
  it('downloads what a known sender sent into uploads/; refuses what is over the cap, by name, and the model sees only the rest', async () => {
    await start();
    h!.llm.push({ text: 'got it' });
    served.set('notes v1.txt', Buffer.from('hello\n'));
    served.set('huge.bin', Buffer.alloc(5000, 1));
    // huge.bin declares no size: the cap is hit while reading, and the partial file is removed.
    const r = await h!.core.receive(
      message({ userId: 'u1', text: 'have a look', files: [file('notes v1.txt'), file('huge.bin')] }),
    );
    expect(r).toMatchObject({ status: 'queued' });
    await h!.core.idle();
    expect(chat.surface.postedIn('dm-u1/')).toEqual([
      '📎 I could not take huge.bin: it is over the 1 KB this bot accepts.',
      'got it',
    ]);
    const saved = uploads();
    // In the sender's one-to-one chat's folder.
    expect(saved).toEqual([expect.stringMatching(/^test\/dm-u1\/\d{8}T\d{6}-[0-9a-f]{6}-notes_v1\.txt$/)]);
    expect(readFileSync(path.join(h!.dir, 'workspace', 'uploads', saved[0]!), 'utf8')).toBe('hello\n');
    expect(userTexts().join()).toContain(`uploads/${saved[0]}`);
    expect(userTexts().join()).not.toContain('huge.bin');
  });

  it('takes nothing when no file arrived: the refusal asks again, the model hears nothing; a declared size over the cap is not even fetched', async () => {
    await start();
    const r = await h!.core.receive(
      message({ userId: 'u1', text: 'summarise this', files: [file('big.pdf', 2000), file('gone.txt')] }),
    );
    expect(r).toBeNull();
    await h!.core.idle();
    expect(chat.surface.postedIn('dm-u1/')).toEqual([
      '📎 I could not take big.pdf: it is 2 KB; this bot accepts files up to 1 KB; gone.txt: download failed (HTTP 404).',
    ]);
    expect(fetched).toEqual(['gone.txt']);
    expect(uploads()).toEqual([]);
    expect(h!.llm.chatRequests()).toHaveLength(0);
  });

  it('a redelivered message downloads nothing again and is answered once', async () => {
    await start();
    h!.llm.push({ text: 'seen' });
    served.set('a.txt', Buffer.from('a'));
    const m = message({ userId: 'u1', files: [file('a.txt')] });
    expect(await h!.core.receive(m)).toMatchObject({ status: 'queued' });
    expect(await h!.core.receive(m)).toEqual({ status: 'duplicate' });
    await h!.core.idle();
    expect(fetched).toEqual(['a.txt']);
    expect(userTexts()).toEqual([
      expect.stringMatching(/\(sent a file: uploads\/test\/dm-u1\/\d{8}T\d{6}-[0-9a-f]{6}-a\.txt\)/),
    ]);
  });
});

describe('core.receive: voice notes', () => {
  it('with transcription off, says so and downloads nothing', async () => {
    await start();
    served.set('v.ogg', Buffer.from('OggS'));
    expect(await h!.core.receive(message({ userId: 'u1', voice: file('v.ogg') }))).toBeNull();
    await h!.core.idle();
    expect(chat.surface.postedIn('dm-u1/')).toEqual(['🎤 Voice messages are off here. Please type your message.']);
    expect(fetched).toEqual([]);
    expect(transcriptions()).toHaveLength(0);
  });

  it('transcribes, echoes the words, then the model gets them; silence and a failed download are told, not submitted', async () => {
    await start({ audio: { transcription_enabled: true } });
    h!.llm.transcript = 'what is the weather';
    h!.llm.push({ text: 'sunny' });
    served.set('v.ogg', Buffer.from('OggS-voice'));
    expect(await h!.core.receive(message({ userId: 'u1', voice: file('v.ogg') }))).toMatchObject({ status: 'queued' });
    await h!.core.idle();
    expect(chat.surface.postedIn('dm-u1/')).toEqual(['🎤 _what is the weather_', 'sunny']);
    expect(userTexts()).toEqual(['"what is the weather"']);

    h!.llm.transcript = '  ';
    expect(await h!.core.receive(message({ userId: 'u1', voice: file('v.ogg') }))).toBeNull();
    expect(await h!.core.receive(message({ userId: 'u1', voice: file('lost.ogg') }))).toBeNull();
    await h!.core.idle();
    expect(chat.surface.postedIn('dm-u1/').slice(2)).toEqual([
      '🎤 I could not hear any words in that voice note.',
      '📎 I could not take lost.ogg: download failed (HTTP 404).',
    ]);
    expect(transcriptions()).toHaveLength(2);
    expect(h!.llm.chatRequests()).toHaveLength(1);
  });
});

describe('core.receive: a conversation that starts mid-thread', () => {
  it('the earlier messages go before the message, between markers, a bot named as such', () => {
    expect(threadPrelude([])).toBe('');
    expect(
      threadPrelude([
        { who: '<@U1>', text: 'the build is red' },
        { who: null, text: 'on it' },
      ]),
    ).toBe('[Earlier in this thread]\n<@U1>: the build is red\nbot: on it\n[End of earlier messages]\n\n');
  });

  it('the newest messages are kept within the bound, whole', () => {
    const earlier = Array.from({ length: 100 }, (_, i) => ({ who: `<@U${i}>`, text: `${i} ${'x'.repeat(100)}` }));
    const text = threadPrelude(earlier);
    const lines = text.split('\n').slice(1, -3);
    expect(lines.at(-1)).toBe(`<@U99>: 99 ${'x'.repeat(100)}`);
    expect(lines.join('\n').length).toBeLessThanOrEqual(THREAD_PRELUDE_CHARS);
    expect(lines.length).toBe(Math.floor((THREAD_PRELUDE_CHARS + 1) / (earlier[99]!.text.length + 9)));
    expect(lines[0]).toMatch(/^<@U\d+>: \d+ x+$/);
    expect(threadPrelude(earlier, 250).split('\n').slice(1, -3)).toEqual([
      `<@U98>: 98 ${'x'.repeat(100)}`,
      `<@U99>: 99 ${'x'.repeat(100)}`,
    ]);
  });

  it("a known sender's message carries the thread so far; a stranger's thread is never read", async () => {
    await start();
    let reads = 0;
    const prelude = async () => {
      reads++;
      return [{ who: '<@U7>', text: 'since the lockfile change?' }];
    };
    h!.llm.push({ text: 'looking' });
    expect(
      await h!.core.receive(
        message({ userId: 'u1', chatKey: 'C3', threadKey: '2.0', direct: false, text: 'can you look?', prelude }),
      ),
    ).toMatchObject({ status: 'queued' });
    await h!.core.idle();
    expect(userTexts()).toEqual([
      JSON.stringify(
        '[Earlier in this thread]\n<@U7>: since the lockfile change?\n[End of earlier messages]\n\ncan you look?',
      ),
    ]);
    expect(
      await h!.core.receive(
        message({ userId: 'x9', chatKey: 'C4', threadKey: '3.0', direct: false, text: 'hi', prelude }),
      ),
    ).toMatchObject({ status: 'pairing_required' });
    expect(reads).toBe(1);
  });
});

describe('core.receive: failures', () => {
  it('an acknowledged message that cannot be taken is answered "send it again"; one the platform will resend throws', async () => {
    await start();
    const broken = () => Promise.reject(new Error('thread history unavailable'));
    expect(
      await h!.core.receive(
        message({
          userId: 'u1',
          chatKey: 'C3',
          threadKey: '2.0',
          direct: false,
          text: 'hi',
          prelude: broken,
          acknowledged: true,
        }),
      ),
    ).toBeNull();
    await expect(h!.core.receive(message({ userId: 'u1', text: 'hi', prelude: broken }))).rejects.toThrow(
      'thread history unavailable',
    );
    await h!.core.idle();
    expect(chat.surface.whispered).toEqual([
      { at: 'C3/2.0', to: 'u1', text: '⚠️ Something went wrong taking that message; please send it again.' },
    ]);
    expect(h!.llm.chatRequests()).toHaveLength(0);
  });
});

describe('the shared download', () => {
  it('refuses over the cap before a request, a failed answer, a broken connection; never leaves a partial file', async () => {
    const root = mkdtempSync(path.join(os.tmpdir(), 'switchboard-download-'));
    const paths = new PathPolicy({ root });
    served.set('ok.txt', Buffer.from('fine'));
    served.set('long.bin', Buffer.alloc(3000, 2));
    const get = (name: string, maxBytes = 1000, declaredSize?: number) =>
      downloadUpload({
        url: `${fileRoot}/${name}`,
        paths,
        folder: 'uploads',
        name,
        maxBytes,
        declaredSize,
        prefix: 'p',
      });
    await expect(get('ok.txt', 1000, 5000)).rejects.toThrow(
      new UploadRefused('file_too_big', 'it is 5 KB; this bot accepts files up to 1 KB'),
    );
    expect(fetched).toEqual([]);
    await expect(get('long.bin')).rejects.toMatchObject({ code: 'file_too_big' });
    await expect(get('missing.txt')).rejects.toMatchObject({
      code: 'download_failed',
      message: 'download failed (HTTP 404)',
    });
    await expect(
      downloadUpload({ url: 'http://127.0.0.1:1/x', paths, folder: 'uploads', name: 'x', maxBytes: 10 }),
    ).rejects.toMatchObject({ code: 'download_failed' });
    const saved = await get('ok.txt');
    expect(saved.rel).toMatch(/^uploads\/p-\d{8}T\d{6}-[0-9a-f]{6}-ok\.txt$/);
    expect(readdirSync(path.join(root, 'uploads'))).toEqual([path.basename(saved.rel)]);
    rmSync(root, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
  });
});
