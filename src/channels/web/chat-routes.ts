/**
 * The chat's API: the event stream (Server-Sent Events, resumed by `Last-Event-ID`), sending a
 * message or a command, deciding a card, stopping a turn, and files both ways. Every call is
 * translated into the core's own calls; nothing here decides policy.
 */
import { randomBytes } from 'node:crypto';
import type http from 'node:http';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import {
  commands,
  sayAnswer,
  actionFromJson,
  safeFileName,
  saveUpload,
  UploadRefused,
  uploadOf,
  uploadFolder,
  openEntry,
  messageByRef,
  messagesAfter,
  sessionAlive,
  rateLimitNotice,
} from '../../kit/index.js';
import type {
  ChatRef,
  Action,
  ChannelCore,
  IncomingFile,
  WebMessage,
  WebSession,
  PathPolicy,
} from '../../kit/index.js';
import { field, HttpRefusal, json, readJson } from './http.js';
import type { WebBody, WebSignal, WebSurface } from './surface.js';

/** What the chat routes need. */
export interface ChatDeps {
  core: () => ChannelCore;
  surface: WebSurface;
  paths: PathPolicy;
  maxUploadBytes: number;
  db: Parameters<typeof messagesAfter>[0];
}

/** A stream with nothing new sends a comment this often (proxies close silent connections). */
const HEARTBEAT_MS = 15_000;
/** Rows other instances write are found by looking this often. */
const POLL_MS = 1_000;

export const principal = (s: WebSession) => `web:${s.user_name}`;

/** A conversation of the signed-in user: `thread` is its key (letters, digits, `-`). */
export function refOf(s: WebSession, thread: string): ChatRef {
  if (!/^[\w-]{0,40}$/.test(thread))
    throw new HttpRefusal(400, 'expected "thread" to be up to 40 letters, digits, "_" or "-"');
  return { channel: 'web', chatKey: s.user_name, threadKey: thread };
}

/** A row as the page gets it (the server's file paths stay here). */
function wire(row: WebMessage): Record<string, unknown> {
  const body = row.deleted ? null : (JSON.parse(row.body) as WebBody);
  if (body && 'path' in body) delete (body as { path?: string }).path;
  if (body && 'snapshot' in body) delete (body as { snapshot?: string }).snapshot;
  if (body?.kind === 'user') body.files = body.files.map((f) => ({ name: f.name, path: '' }));
  // A document is downloaded on its own (it may be large): the page gets its name only.
  if (body?.kind === 'document') body.text = '';
  // `at`: when it was first shown (ms), from its place (see `WebSurface.nextPos`), kept through edits.
  return { id: row.id, ref: row.ref, thread: row.thread_key, pos: row.pos, at: Math.floor(row.pos / 1000), body };
}

/**
 * `GET /api/stream`: the user's messages since `Last-Event-ID` (all of them first), then live,
 * until the page goes or the session is revoked.
 */
export async function stream(
  deps: ChatDeps,
  req: http.IncomingMessage,
  res: http.ServerResponse,
  s: WebSession,
): Promise<void> {
  let after = Number(req.headers['last-event-id'] ?? 0);
  if (!Number.isSafeInteger(after) || after < 0) after = 0;
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-store',
    'x-accel-buffering': 'no',
  });
  res.write('retry: 1000\n\n');
  let wake: () => void = () => {};
  const onChange = (chatKey: string) => chatKey === s.user_name && wake();
  const onSignal = (chatKey: string, sig: WebSignal) => {
    if (chatKey === s.user_name) res.write(`event: signal\ndata: ${JSON.stringify(sig)}\n\n`);
  };
  deps.surface.bus.on('change', onChange);
  deps.surface.bus.on('signal', onSignal);
  let open = true;
  let shuttingDown = false;
  const end = () => {
    open = false;
    wake();
  };
  const shutdown = () => {
    shuttingDown = true;
    end();
  };
  req.on('close', end);
  deps.surface.bus.once('end', shutdown);
  let quietSince = Date.now();
  // A fresh page (no Last-Event-ID) is told when the stored history is all sent; a resumed stream needs no mark.
  let caughtUp = after !== 0;
  try {
    while (open) {
      const rows = await messagesAfter(deps.db, s.user_name, after);
      for (const row of rows) res.write(`id: ${row.id}\ndata: ${JSON.stringify(wire(row))}\n\n`);
      if (rows.length) {
        after = rows.at(-1)!.id;
        quietSince = Date.now();
        continue;
      }
      // Everything stored so far is sent: the page may now pick the conversation to open.
      if (!caughtUp) {
        caughtUp = true;
        res.write('event: ready\ndata: {}\n\n');
      }
      // A revoked (or expired) session's open stream ends within a poll: revocation holds at once.
      if (!(await sessionAlive(deps.db, s.id, Date.now()))) break;
      if (Date.now() - quietSince > HEARTBEAT_MS) {
        res.write(': keep-alive\n\n');
        quietSince = Date.now();
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, POLL_MS);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  } finally {
    deps.surface.bus.off('change', onChange);
    deps.surface.bus.off('signal', onSignal);
    deps.surface.bus.off('end', shutdown);
    // At shutdown the connection goes too: one left idle (kept alive by the client or a proxy)
    // would hold the server's close for its whole keep-alive timeout.
    if (shuttingDown) res.end(() => req.socket.destroy());
    else res.end();
  }
}

/**
 * `POST /api/send {thread, text, files, id}`: a command, or a message to the model (answers, notes
 * too). `id` is the page's own name for the message (see {@link clientKey}): the same POST again (a
 * retry after the network failed) is a duplicate, shown and answered once.
 */
export async function send(
  deps: ChatDeps,
  req: http.IncomingMessage,
  res: http.ServerResponse,
  s: WebSession,
): Promise<void> {
  const body = await readJson(req);
  const ref = refOf(s, field(body, 'thread', true));
  const text = field(body, 'text', true).trim();
  const files = uploadedFiles(deps, s, body.files);
  if (!text && files.length === 0) throw new HttpRefusal(400, 'empty message');
  const key = clientKey(s, body.id);
  const core = deps.core();
  const who = principal(s);
  const chat = { channel: 'web', chatKey: ref.chatKey, threadKey: ref.threadKey ?? '' };
  // A known command answers in the chat through the ledger; an unknown word after a slash is a message.
  const cmd = files.length === 0 ? /^\/([a-z0-9_]+)(?:\s+([\s\S]*))?$/i.exec(text) : null;
  if (cmd && commands().some((c) => c.name === cmd[1]!.toLowerCase())) {
    // Commands do not pass `receive`: their key is recorded here, so a retried one runs once.
    if (!(await core.markInboundSeen(key))) return json(res, 200, { status: 'duplicate' });
    const place = {
      by: who,
      chat,
      ref,
      shared: false,
      spell: (n: string) => `/${n}`,
    };
    const a = await core.command(cmd[1]!, (cmd[2] ?? '').trim(), place);
    await showTyped(deps, key, chat, { kind: 'user', text, by: who, files: [] });
    await sayAnswer(core, chat, a, `command:${key}`, { omitEchoed: true });
    return json(res, 200, { status: 'command' });
  }
  await showTyped(deps, key, chat, { kind: 'user', text, by: who, files });
  const r = await core.receive({
    ...ref,
    userId: s.user_name,
    userName: s.user_name,
    text,
    dedupKey: key,
    direct: true,
    ...(files.length ? { files: files.map((f) => uploaded(deps, f)) } : {}),
  });
  // The first refusal in a window is also a message of the chat, as on every channel (`inChat`):
  // the page then shows that message alone; later refusals are said by the page only.
  if (r?.status === 'rate_limited')
    return json(res, 429, {
      status: r.status,
      error: rateLimitNotice(r.retryAfterMs),
      ...(r.notify ? { inChat: true } : {}),
    });
  json(res, 200, { status: r?.status ?? 'refused' });
}

/**
 * The inbound key of a message from the page: `web:<user>:<id>`, the page's id for it (letters,
 * digits, `_`, `-`). A caller that gives none (a script) gets a fresh one: never a duplicate.
 */
export function clientKey(s: WebSession, raw: unknown): string {
  if (raw === undefined) return `web:${s.user_name}:${randomBytes(12).toString('hex')}`;
  if (typeof raw !== 'string' || !/^[\w-]{8,64}$/.test(raw))
    throw new HttpRefusal(400, 'expected "id" to be 8 to 64 letters, digits, "_" or "-"');
  return `web:${s.user_name}:${raw}`;
}

/**
 * Show what the user typed, once per inbound key: a retried POST finds its row (under the key)
 * and leaves it where it is, after whatever the first one already brought.
 */
async function showTyped(deps: ChatDeps, key: string, chat: { chatKey: string; threadKey: string }, body: WebBody) {
  const ref = `typed:${key}`;
  if (await messageByRef(deps.db, ref)) return;
  await deps.surface.writeAs(ref, chat, body);
}

/** An upload of this user's, handed to the core as a message's file: it is in its folder already. */
function uploaded(deps: ChatDeps, f: { name: string; path: string }): IncomingFile {
  return {
    name: f.name,
    async fetch(folder: string) {
      const resolved = deps.paths.resolve(f.path, 'read');
      // The core files a direct chat's uploads where this user's go (checked in `uploadedFiles`).
      if (!resolved.ok || !f.path.startsWith(`${folder}/`))
        throw new UploadRefused('upload_path_refused', 'it is not an upload of yours');
      return { abs: resolved.abs, rel: f.path };
    },
  };
}

/**
 * Where a web user's uploads are kept: their one-to-one chat's folder (`uploads/web/<user>`),
 * seen by every conversation of theirs and by no one else's.
 */
const folderOf = (s: WebSession) => uploadFolder({ channel: 'web', chatKey: s.user_name }, true);

/** The files of a message: paths this user uploaded (`uploads/web/<user>/…`). */
function uploadedFiles(deps: ChatDeps, s: WebSession, raw: unknown): Array<{ name: string; path: string }> {
  if (raw === undefined) return [];
  if (!Array.isArray(raw) || raw.length > 10)
    throw new HttpRefusal(400, 'expected "files" to be a list of at most 10 uploads');
  const folder = `${folderOf(s)}/`;
  return raw.map((f: unknown) => {
    const p = typeof f === 'object' && f ? (f as { path?: unknown }).path : undefined;
    if (typeof p !== 'string' || !p.startsWith(folder) || p.slice(folder.length).includes('/') || p.includes('..'))
      throw new HttpRefusal(400, 'unknown upload');
    const resolved = deps.paths.resolve(p, 'read');
    if (!resolved.ok) throw new HttpRefusal(400, 'unknown upload');
    // uploads/web/<user>/<stamp>-<random>-<name>
    const name = path.basename(p).split('-').slice(2).join('-');
    return { name: name || 'file', path: p };
  });
}

/** A button's action from the page, checked for shape (the router checks who may). */
export function actionOf(raw: unknown): Action {
  const action = actionFromJson(raw);
  if (action) return action;
  throw new HttpRefusal(
    400,
    'expected "action": approval {id, choice}, question {id, index}, job {id, op} or pairing {code}',
  );
}

/** `POST /api/action {action}`: a tapped button, through the core's action router. */
export async function act(
  core: ChannelCore,
  body: Record<string, unknown>,
  by: string,
): Promise<{ ok: boolean; message: string }> {
  const out = await core.act(actionOf(body.action), by);
  return { ok: out.ok, message: out.text };
}

/** `POST /api/upload?name=…`: the raw body saved in the user's upload folder (size-capped). */
export async function upload(
  deps: ChatDeps,
  req: http.IncomingMessage,
  res: http.ServerResponse,
  s: WebSession,
  url: URL,
): Promise<void> {
  const declared = Number(req.headers['content-length'] ?? 0);
  const cap = deps.maxUploadBytes;
  const tooBig = () =>
    new HttpRefusal(
      413,
      `That file is over ${(cap / 1048576).toFixed(1)} MB, the largest this chat takes (web.max_upload_bytes).`,
    );
  if (declared > cap) throw tooBig();
  const name = safeFileName(url.searchParams.get('name') ?? 'file');
  let rel: string;
  try {
    ({ rel } = await saveUpload(req, { paths: deps.paths, folder: folderOf(s), name, maxBytes: cap }));
  } catch (err) {
    if (err instanceof UploadRefused) throw err.code === 'file_too_big' ? tooBig() : new HttpRefusal(500, err.message);
    throw new HttpRefusal(400, 'upload interrupted');
  }
  json(res, 200, { path: rel, name });
}

/**
 * `GET /api/file?ref=…[&i=N]`: a file the bot sent, or one the user attached, as a download. A
 * sent file is the copy taken when it was sent (`delivery/sent-files.ts`); an attached one (and a
 * file sent before copies were kept) is read through the confined primitive, never by its path.
 */
export async function download(deps: ChatDeps, res: http.ServerResponse, s: WebSession, url: URL): Promise<void> {
  const row = await messageByRef(deps.db, url.searchParams.get('ref') ?? '');
  if (!row || row.chat_key !== s.user_name || row.deleted) throw new HttpRefusal(404, 'no such file');
  const body = JSON.parse(row.body) as WebBody;
  if (body.kind === 'document') return sendDocument(res, body.name, body.text);
  if (body.kind === 'file' && body.snapshot) {
    const copy = await uploadOf(deps.db, { snapshot: body.snapshot, kind: 'file' }).catch(() => null);
    if (!copy) throw new HttpRefusal(404, 'the file is not there any more');
    return sendDownload(res, copy.name, copy.size, Readable.from(copy.chunks()));
  }
  const input =
    body.kind === 'file'
      ? body.path
      : body.kind === 'user'
        ? body.files[Number(url.searchParams.get('i') ?? 0)]?.path
        : undefined;
  if (!input) throw new HttpRefusal(404, 'no such file');
  const opened = await openEntry(deps.paths, input, 'read').catch(() => null);
  if (!opened) throw new HttpRefusal(404, 'the file is not there any more');
  try {
    if (!opened.stat.isFile()) throw new HttpRefusal(404, 'the file is not there any more');
    const size = opened.stat.size;
    // From the opened descriptor, and no more than the size announced.
    const content =
      size === 0 ? Readable.from([]) : opened.handle.createReadStream({ start: 0, end: size - 1, autoClose: false });
    await sendDownload(res, path.basename(opened.abs), size, content);
  } finally {
    await opened.handle.close();
  }
}

async function sendDownload(res: http.ServerResponse, name: string, size: number, content: Readable): Promise<void> {
  res.writeHead(200, {
    'content-type': 'application/octet-stream',
    'content-length': String(size),
    'content-disposition': `attachment; filename="${name.replace(/[^\w.-]+/g, '_')}"`,
    'x-content-type-options': 'nosniff',
    'content-security-policy': "default-src 'none'; sandbox",
  });
  await pipeline(content, res);
}

/** A text file switchboard wrote, served from the message that holds it. */
function sendDocument(res: http.ServerResponse, name: string, text: string): void {
  const bytes = Buffer.from(text, 'utf8');
  res.writeHead(200, {
    'content-type': 'text/plain; charset=utf-8',
    'content-length': String(bytes.length),
    'content-disposition': `attachment; filename="${name.replace(/[^\w.-]+/g, '_')}"`,
    'x-content-type-options': 'nosniff',
    'content-security-policy': "default-src 'none'; sandbox",
  });
  res.end(bytes);
}
