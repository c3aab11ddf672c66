// biome-ignore-all lint/suspicious/noExplicitAny: Slack payloads and Block Kit JSON are loosely typed by nature
/**
 * A Slack emulator on 127.0.0.1 for tests: the Web API under `<url>/api/` (what the WebClient and
 * Bolt call), file upload and download endpoints, and a Socket Mode WebSocket server
 * (`apps.connections.open` → `ws://…`, `hello`, envelopes and acks). It validates what Slack
 * validates (block limits, unknown messages), can answer any method with 429 + Retry-After, and
 * records every call so tests can inspect messages per channel and thread.
 *
 * Toward the app it plays Slack's side too: signed Events API / interaction / slash-command
 * requests over HTTP, or the same as envelopes over the socket ({@link SlackEmulator.deliver}).
 */
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import { signSlackRequest } from './slack-payloads.js';

/** A message as the emulator stores it (bot posts and user messages alike). */
export interface EmuMessage {
  channel: string;
  ts: string;
  thread_ts?: string;
  user?: string;
  bot_id?: string;
  text: string;
  blocks?: any[];
  /** Every version of the message, oldest first (post, then each chat.update or appended chunk). */
  history: Array<{ text: string; blocks?: any[] }>;
  /** A streamed message (chat.startStream) still open: appended to until stopped or expired. */
  streaming?: boolean;
  /** When its stream started (ms), for expiry. */
  streamStartedAt?: number;
  /** Every chunk a stream was sent (chat.startStream / appendStream / stopStream `chunks`), in order. */
  chunks?: any[];
  /** A stream's tasks as they stand: each `task_update` chunk's fields merged into its id's task, in first-seen order. */
  tasks?: any[];
}

/** An ephemeral message (visible to one user). */
export interface EmuEphemeral {
  channel: string;
  user: string;
  thread_ts?: string;
  text: string;
  blocks?: any[];
}

/** A file uploaded through getUploadURLExternal + POST + completeUploadExternal. */
export interface EmuUpload {
  id: string;
  filename: string;
  bytes: Buffer;
  title?: string;
  channel?: string;
  thread_ts?: string;
  initial_comment?: string;
  completed: boolean;
}

/** One Web API call as received. */
export interface EmuCall {
  method: string;
  args: Record<string, any>;
  status: number;
  /** The `error` Slack answered, when it refused the call. */
  error?: string;
}

/** What kind of request to deliver to the app. */
export type DeliveryKind = 'events_api' | 'interactive' | 'slash_commands';

/** Reply of the app to a delivery: HTTP status and body, or the socket ack payload as JSON. */
export interface DeliveryResult {
  status: number;
  body: string;
}

/** Options of {@link startSlackEmulator}. */
export interface SlackEmulatorOptions {
  botToken?: string;
  appToken?: string;
  botUserId?: string;
  botId?: string;
  teamId?: string;
}

/** Handle on a running emulator. */
export interface SlackEmulator {
  /** Base of the Web API, ending in `/api/` (use as `SLACK_API_URL`). */
  apiUrl: string;
  botUserId: string;
  botId: string;
  teamId: string;
  calls: EmuCall[];
  messages: EmuMessage[];
  ephemerals: EmuEphemeral[];
  /** Messages removed with chat.delete. */
  deleted: EmuMessage[];
  uploads: EmuUpload[];
  statuses: Array<{ channel_id: string; thread_ts: string; status: string }>;
  suggestedPrompts: Array<{ channel_id: string; thread_ts: string; prompts: any[] }>;
  /** Where HTTP deliveries go (the app's `/slack/events`) and the secret they are signed with. */
  app: { url: string | null; signingSecret: string; mode: 'http' | 'socket' };
  /**
   * Native streams (chat.startStream / appendStream / stopStream): `expiryMs` after its start a
   * stream answers `message_not_in_streaming_state` (Slack: about 5 minutes); `refuse` answers
   * the three methods `unknown_method`, as a server without them does.
   */
  streams: { expiryMs: number; refuse: boolean };
  /** `refuse`: answer messages carrying `task_card` or `plan` blocks `invalid_blocks`, as a workspace without them. */
  taskCards: { refuse: boolean };
  /** `refuse`: answer messages carrying `markdown` blocks `invalid_blocks`, as a workspace or server without them. */
  markdownBlocks: { refuse: boolean };
  /** Answer the next `times` calls of `method` with 429 and `Retry-After`. */
  rateLimit(method: string, times: number, retryAfter?: string): void;
  /**
   * Hold the next call of `method` (matching `match`): `before` Slack carries it out (a client
   * that dies meanwhile never reached Slack), or `after` (Slack has it; the answer is withheld).
   */
  hold(
    method: string,
    options?: { match?: (args: Record<string, any>) => boolean; phase?: 'before' | 'after' },
  ): { arrived: Promise<void>; release(): void };
  /** Carry out the next `times` calls of `method`, then drop the connection instead of answering. */
  dropResponse(method: string, times: number): void;
  /** Messages in a channel, optionally only those of one thread (the parent included). */
  messagesIn(channel: string, threadTs?: string): EmuMessage[];
  /** Bot messages (not user messages) in a channel/thread. */
  botMessages(channel: string, threadTs?: string): EmuMessage[];
  /** Add a user message to history and return its `message` event (for `deliver`). */
  userMessage(options: {
    channel: string;
    user: string;
    text: string;
    threadTs?: string;
    channelType?: 'im' | 'channel' | 'group';
    files?: any[];
    mention?: boolean;
  }): Record<string, any>;
  /** Host a file for download at a `url_private` that requires the bot token. */
  hostFile(name: string, bytes: Buffer, mimetype?: string): Record<string, any>;
  /** Deliver a request to the app over HTTP (signed) or the socket, per `app.mode`. */
  deliver(kind: DeliveryKind, payload: Record<string, any>, options?: DeliverOptions): Promise<DeliveryResult>;
  /** Number of open Socket Mode connections. */
  socketCount(): number;
  /** Ask every Socket Mode client to reconnect, as Slack does when it recycles a connection. */
  refreshSockets(): void;
  close(): Promise<void>;
}

/** Options of {@link SlackEmulator.deliver}. */
export interface DeliverOptions {
  retryNum?: number;
  /** Sign with the wrong secret. */
  badSignature?: boolean;
  /** Override the request timestamp (seconds), e.g. for a stale request. */
  timestampSec?: number;
  /** Send this HTTP delivery to another URL than `app.url` (one instance of several behind a load balancer). */
  url?: string;
}

const SECTION_MAX = 3000;
const BLOCKS_MAX = 50;
const TEXT_MAX = 40_000;
/** A table block's rows and a row's cells (Block Kit reference). */
const TABLE_ROWS_MAX = 100;
const TABLE_CELLS_MAX = 20;
/** `markdown_text` of a stream call. */
const STREAM_TEXT_MAX = 12_000;
/** A markdown block's text, and all of a message's markdown blocks together (Block Kit reference). */
const MARKDOWN_BLOCK_MAX = 12_000;

const TASK_STATUSES = ['pending', 'in_progress', 'complete', 'error'];

/** Whether `v` is a single `rich_text` entity (a task card's details or output). */
function isRichText(v: any): boolean {
  return (
    v?.type === 'rich_text' &&
    Array.isArray(v.elements) &&
    v.elements.length > 0 &&
    v.elements.every(
      (e: any) =>
        typeof e?.type === 'string' &&
        e.type.startsWith('rich_text_') &&
        Array.isArray(e.elements) &&
        e.elements.every((x: any) => typeof x?.type === 'string'),
    )
  );
}

/** Why Slack would refuse a `task_card` (Block Kit reference: task_id, title, status, rich-text output), or null. */
function badTaskCard(b: any): boolean {
  if (typeof b?.task_id !== 'string' || !b.task_id) return true;
  if (typeof b.title !== 'string' || !b.title) return true;
  if (b.status !== undefined && !TASK_STATUSES.includes(b.status)) return true;
  for (const field of ['details', 'output']) if (b[field] !== undefined && !isRichText(b[field])) return true;
  return b.sources !== undefined && !Array.isArray(b.sources);
}

/**
 * Why Slack would refuse these blocks, or null. `taskCards: false` refuses task cards and plans,
 * `markdownBlocks: false` markdown blocks, as a workspace without them.
 */
function validateBlocks(blocks: any[] | undefined, taskCards = true, markdownBlocks = true): string | null {
  if (blocks === undefined) return null;
  if (!Array.isArray(blocks)) return 'invalid_blocks_format';
  if (blocks.length > BLOCKS_MAX) return 'invalid_blocks';
  // Markdown blocks: standard Markdown text, at most 12 000 characters each and in all of them together.
  const markdown = blocks.filter((b) => b?.type === 'markdown');
  if (markdown.length && !markdownBlocks) return 'invalid_blocks';
  if (markdown.some((b) => typeof b.text !== 'string' || !b.text || b.text.length > MARKDOWN_BLOCK_MAX))
    return 'invalid_blocks';
  if (markdown.reduce((n, b) => n + b.text.length, 0) > MARKDOWN_BLOCK_MAX) return 'invalid_blocks';
  for (const b of blocks) {
    if (b?.type !== 'task_card' && b?.type !== 'plan') continue;
    if (!taskCards) return 'invalid_blocks';
    if (b.type === 'task_card' && badTaskCard(b)) return 'invalid_blocks';
    if (b.type === 'plan') {
      if (typeof b.title !== 'string' || !b.title) return 'invalid_blocks';
      if (b.tasks !== undefined && (!Array.isArray(b.tasks) || b.tasks.some((t: any) => badTaskCard(t))))
        return 'invalid_blocks';
      // Task ids name a plan's tasks: each once.
      const ids = (b.tasks ?? []).map((t: any) => t.task_id);
      if (new Set(ids).size !== ids.length) return 'invalid_blocks';
    }
  }
  // One table a message, at most 100 rows of at most 20 cells, each cell with some text.
  if (blocks.filter((b) => b?.type === 'table').length > 1) return 'invalid_blocks';
  for (const b of blocks) {
    if (b?.type === 'table') {
      const rows = b.rows;
      if (!Array.isArray(rows) || rows.length === 0 || rows.length > TABLE_ROWS_MAX) return 'invalid_blocks';
      for (const row of rows) {
        if (!Array.isArray(row) || row.length === 0 || row.length > TABLE_CELLS_MAX) return 'invalid_blocks';
        for (const cell of row)
          if (!['raw_text', 'raw_number', 'rich_text'].includes(cell?.type)) return 'invalid_blocks';
          else if (cell.type === 'raw_text' && !(typeof cell.text === 'string' && cell.text.length > 0))
            return 'invalid_blocks';
      }
      if (b.column_settings !== undefined && (!Array.isArray(b.column_settings) || b.column_settings.length > 20))
        return 'invalid_blocks';
    }
  }
  for (const b of blocks) {
    if (!b || typeof b.type !== 'string') return 'invalid_blocks';
    if (b.type === 'section' && (typeof b.text?.text !== 'string' || b.text.text.length > SECTION_MAX))
      return 'invalid_blocks';
    if (b.type === 'actions' && (!Array.isArray(b.elements) || b.elements.length > 25)) return 'invalid_blocks';
    if (b.type === 'actions') {
      for (const e of b.elements)
        if (typeof e.action_id !== 'string' || String(e.value ?? '').length > 2000) return 'invalid_blocks';
    }
  }
  return null;
}

function decodeJsonField(v: unknown): any {
  if (typeof v !== 'string') return v;
  try {
    return JSON.parse(v);
  } catch {
    return v;
  }
}

const CHUNK_TYPES = ['markdown_text', 'task_update', 'plan_update', 'blocks'];

/**
 * Why Slack would refuse a stream's `chunks` (the chunk types of @slack/types: markdown_text with
 * its text, task_update with an id, a title and a status, plan_update with a title, blocks), or
 * null. `taskCards: false` refuses task and plan chunks, as a workspace without task cards.
 */
function validateChunks(chunks: unknown, taskCards: boolean, markdownBlocks: boolean): string | null {
  if (chunks === undefined) return null;
  if (!Array.isArray(chunks) || chunks.length === 0) return 'invalid_chunks';
  for (const c of chunks as any[]) {
    if (!CHUNK_TYPES.includes(c?.type)) return 'invalid_chunks';
    if (c.type === 'markdown_text' && (typeof c.text !== 'string' || c.text.length > STREAM_TEXT_MAX))
      return 'invalid_chunks';
    if ((c.type === 'task_update' || c.type === 'plan_update') && !taskCards) return 'invalid_chunks';
    if (c.type === 'plan_update' && (typeof c.title !== 'string' || !c.title)) return 'invalid_chunks';
    if (c.type === 'task_update') {
      if (typeof c.id !== 'string' || !c.id || typeof c.title !== 'string' || !c.title) return 'invalid_chunks';
      if (!TASK_STATUSES.includes(c.status)) return 'invalid_chunks';
      for (const field of ['details', 'output'])
        if (c[field] !== undefined && typeof c[field] !== 'string') return 'invalid_chunks';
      if (c.sources !== undefined && !Array.isArray(c.sources)) return 'invalid_chunks';
    }
    if (c.type === 'blocks') {
      if (!Array.isArray(c.blocks)) return 'invalid_chunks';
      const bad = validateBlocks(c.blocks, taskCards, markdownBlocks);
      if (bad) return bad;
    }
  }
  return null;
}

/** Record a stream's chunks on its message: text appended, tasks updated by id. */
function applyChunks(msg: EmuMessage, chunks: any[] | undefined): void {
  if (!chunks) return;
  msg.chunks = [...(msg.chunks ?? []), ...chunks];
  for (const c of chunks) {
    if (c.type === 'markdown_text') msg.text += c.text;
    if (c.type === 'task_update') {
      msg.tasks ??= [];
      const task = msg.tasks.find((t) => t.id === c.id);
      if (task) Object.assign(task, c);
      else msg.tasks.push({ ...c });
    }
  }
}

/** Start the emulator on a free loopback port. */
export async function startSlackEmulator(options: SlackEmulatorOptions = {}): Promise<SlackEmulator> {
  const botToken = options.botToken ?? 'xoxb-emulator';
  const appToken = options.appToken ?? 'xapp-emulator';
  const botUserId = options.botUserId ?? 'U0BOT';
  const botId = options.botId ?? 'B0BOT';
  const teamId = options.teamId ?? 'T0TEAM';
  let tsCounter = 0;
  const baseSec = Math.floor(Date.now() / 1000);
  const nextTs = () => `${baseSec + Math.floor(tsCounter / 1000)}.${String(++tsCounter).padStart(6, '0')}`;
  const limits = new Map<string, { times: number; retryAfter: string }>();
  const drops = new Map<string, number>();
  const hosted = new Map<string, { bytes: Buffer; name: string }>();
  const sockets = new Set<WebSocket>();
  const pendingAcks = new Map<string, (payload: unknown) => void>();
  let envelopeCounter = 0;
  let url = '';

  const emu: SlackEmulator = {
    apiUrl: '',
    botUserId,
    botId,
    teamId,
    calls: [],
    messages: [],
    ephemerals: [],
    deleted: [],
    uploads: [],
    statuses: [],
    suggestedPrompts: [],
    app: { url: null, signingSecret: 'emulator-signing-secret', mode: 'http' },
    streams: { expiryMs: 5 * 60_000, refuse: false },
    taskCards: { refuse: false },
    markdownBlocks: { refuse: false },
    hold: () => {
      throw new Error('emulator: not started');
    },
    rateLimit(method, times, retryAfter = '0') {
      limits.set(method, { times, retryAfter });
    },
    dropResponse(method, times) {
      drops.set(method, times);
    },
    messagesIn(channel, threadTs) {
      return emu.messages.filter(
        (m) => m.channel === channel && (threadTs === undefined || m.ts === threadTs || m.thread_ts === threadTs),
      );
    },
    botMessages(channel, threadTs) {
      return emu.messagesIn(channel, threadTs).filter((m) => m.bot_id === botId);
    },
    userMessage(o) {
      const ts = nextTs();
      const text = o.mention ? `<@${botUserId}> ${o.text}` : o.text;
      emu.messages.push({ channel: o.channel, ts, thread_ts: o.threadTs, user: o.user, text, history: [{ text }] });
      const event: Record<string, any> = {
        type: o.mention ? 'app_mention' : 'message',
        channel: o.channel,
        user: o.user,
        text,
        ts,
        event_ts: ts,
        team: teamId,
      };
      if (!o.mention) event.channel_type = o.channelType ?? (o.channel.startsWith('D') ? 'im' : 'channel');
      if (o.threadTs) event.thread_ts = o.threadTs;
      if (o.files) {
        event.files = o.files;
        event.subtype = 'file_share';
      }
      return event;
    },
    hostFile(name, bytes, mimetype = 'application/octet-stream') {
      const id = `F${hosted.size + 1}HOST`;
      hosted.set(id, { bytes, name });
      return {
        id,
        name,
        title: name,
        mimetype,
        size: bytes.length,
        url_private: `${url}/files/${id}/${encodeURIComponent(name)}`,
        url_private_download: `${url}/files/${id}/download/${encodeURIComponent(name)}`,
      };
    },
    async deliver(kind, payload, opts = {}) {
      if (emu.app.mode === 'socket') return deliverSocket(kind, payload, opts);
      return deliverHttp(kind, payload, opts);
    },
    socketCount: () => sockets.size,
    refreshSockets() {
      for (const ws of sockets)
        ws.send(JSON.stringify({ type: 'disconnect', reason: 'refresh_requested', debug_info: { host: 'emu' } }));
    },
    async close() {
      for (const ws of sockets) ws.terminate();
      wss.close();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };

  async function deliverHttp(
    kind: DeliveryKind,
    payload: Record<string, any>,
    o: DeliverOptions,
  ): Promise<DeliveryResult> {
    const target = o.url ?? emu.app.url;
    if (!target) throw new Error('emulator: app.url is not set');
    let body: string;
    let contentType: string;
    if (kind === 'events_api') {
      body = JSON.stringify(payload);
      contentType = 'application/json';
    } else if (kind === 'interactive') {
      body = new URLSearchParams({ payload: JSON.stringify(payload) }).toString();
      contentType = 'application/x-www-form-urlencoded';
    } else {
      body = new URLSearchParams(payload as Record<string, string>).toString();
      contentType = 'application/x-www-form-urlencoded';
    }
    const ts = o.timestampSec ?? Math.floor(Date.now() / 1000);
    const secret = o.badSignature ? `${emu.app.signingSecret}-wrong` : emu.app.signingSecret;
    const headers: Record<string, string> = {
      'content-type': contentType,
      'x-slack-request-timestamp': String(ts),
      'x-slack-signature': signSlackRequest(secret, ts, body),
    };
    if (o.retryNum !== undefined) {
      headers['x-slack-retry-num'] = String(o.retryNum);
      headers['x-slack-retry-reason'] = 'http_timeout';
    }
    const res = await fetch(target, { method: 'POST', headers, body });
    return { status: res.status, body: await res.text() };
  }

  async function deliverSocket(
    kind: DeliveryKind,
    payload: Record<string, any>,
    o: DeliverOptions,
  ): Promise<DeliveryResult> {
    const ws = [...sockets].find((s) => s.readyState === s.OPEN);
    if (!ws) throw new Error('emulator: no open Socket Mode connection');
    const envelopeId = `env-${++envelopeCounter}`;
    const acked = new Promise<unknown>((resolve) => pendingAcks.set(envelopeId, resolve));
    const envelope: Record<string, unknown> = {
      envelope_id: envelopeId,
      type: kind,
      payload,
      accepts_response_payload: kind !== 'events_api',
    };
    if (kind === 'events_api') {
      envelope.retry_attempt = o.retryNum ?? 0;
      envelope.retry_reason = o.retryNum ? 'timeout' : '';
    }
    ws.send(JSON.stringify(envelope));
    const timeout = new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), 5_000).unref());
    const result = await Promise.race([acked, timeout]);
    pendingAcks.delete(envelopeId);
    if (result === 'timeout') return { status: 0, body: '' };
    return { status: 200, body: JSON.stringify(result ?? {}) };
  }

  function api(
    method: string,
    args: Record<string, any>,
    auth: string | undefined,
  ): { status: number; body: any; headers?: Record<string, string> } {
    const limit = limits.get(method);
    if (limit && limit.times > 0) {
      limit.times -= 1;
      return { status: 429, body: { ok: false, error: 'ratelimited' }, headers: { 'retry-after': limit.retryAfter } };
    }
    const token = auth?.replace(/^Bearer\s+/i, '') ?? args.token;
    const wanted = method === 'apps.connections.open' ? appToken : botToken;
    if (token !== wanted) return { status: 200, body: { ok: false, error: 'invalid_auth' } };
    const ok = (extra: Record<string, unknown> = {}) => ({ status: 200, body: { ok: true, ...extra } });
    const fail = (error: string) => ({ status: 200, body: { ok: false, error } });
    const blocks = decodeJsonField(args.blocks);
    switch (method) {
      case 'auth.test':
        return ok({
          url: 'https://emu.slack.com/',
          team: 'Emu',
          team_id: teamId,
          user: 'switchboard',
          user_id: botUserId,
          bot_id: botId,
        });
      case 'chat.postMessage': {
        if (!args.channel) return fail('channel_not_found');
        if (!args.text && !blocks) return fail('no_text');
        if (String(args.text ?? '').length > TEXT_MAX) return fail('msg_too_long');
        const bad = validateBlocks(blocks, !emu.taskCards.refuse, !emu.markdownBlocks.refuse);
        if (bad) return fail(bad);
        const ts = nextTs();
        const text = String(args.text ?? '');
        const msg: EmuMessage = {
          channel: args.channel,
          ts,
          text,
          blocks,
          user: botUserId,
          bot_id: botId,
          history: [{ text, blocks }],
        };
        if (args.thread_ts) msg.thread_ts = String(args.thread_ts);
        emu.messages.push(msg);
        return ok({ channel: args.channel, ts, message: { ...msg, history: undefined } });
      }
      case 'chat.update': {
        const msg = emu.messages.find((m) => m.channel === args.channel && m.ts === args.ts);
        if (!msg) return fail('message_not_found');
        if (msg.bot_id !== botId) return fail('cant_update_message');
        const bad = validateBlocks(blocks, !emu.taskCards.refuse, !emu.markdownBlocks.refuse);
        if (bad) return fail(bad);
        if (String(args.text ?? '').length > TEXT_MAX) return fail('msg_too_long');
        msg.text = String(args.text ?? '');
        msg.blocks = blocks;
        // An update replaces a streamed message's text: its stream is over.
        msg.streaming = false;
        msg.history.push({ text: msg.text, blocks });
        return ok({ channel: msg.channel, ts: msg.ts, text: msg.text });
      }
      case 'chat.startStream':
      case 'chat.appendStream':
      case 'chat.stopStream':
        return emu.streams.refuse ? fail('unknown_method') : stream(method, args, blocks);
      case 'chat.delete': {
        const at = emu.messages.findIndex((m) => m.channel === args.channel && m.ts === args.ts);
        if (at < 0) return fail('message_not_found');
        if (emu.messages[at]!.bot_id !== botId) return fail('cant_delete_message');
        emu.deleted.push(...emu.messages.splice(at, 1));
        return ok({ channel: args.channel, ts: args.ts });
      }
      case 'chat.postEphemeral': {
        if (!args.channel || !args.user) return fail('channel_not_found');
        emu.ephemerals.push({
          channel: args.channel,
          user: args.user,
          thread_ts: args.thread_ts,
          text: String(args.text ?? ''),
          blocks,
        });
        return ok({ message_ts: nextTs() });
      }
      case 'conversations.history': {
        const msgs = emu.messages
          .filter((m) => m.channel === args.channel && !m.thread_ts)
          .map((m) => ({ ...m, history: undefined }));
        return ok({ messages: msgs.reverse(), has_more: false });
      }
      case 'conversations.replies': {
        const msgs = emu.messagesIn(String(args.channel), String(args.ts)).map((m) => ({ ...m, history: undefined }));
        return msgs.length ? ok({ messages: msgs, has_more: false }) : fail('thread_not_found');
      }
      case 'files.getUploadURLExternal': {
        if (!args.filename || !args.length) return fail('invalid_arguments');
        const id = `F${emu.uploads.length + 1}UP`;
        emu.uploads.push({ id, filename: String(args.filename), bytes: Buffer.alloc(0), completed: false });
        return ok({ upload_url: `${url}/upload/${id}`, file_id: id });
      }
      case 'files.completeUploadExternal': {
        const files = decodeJsonField(args.files) as Array<{ id: string; title?: string }>;
        const done = [];
        for (const f of files ?? []) {
          const up = emu.uploads.find((u) => u.id === f.id);
          if (!up || up.bytes.length === 0) return fail('file_not_found');
          Object.assign(up, {
            completed: true,
            title: f.title,
            channel: args.channel_id,
            thread_ts: args.thread_ts,
            initial_comment: args.initial_comment,
          });
          done.push({ id: up.id, name: up.filename, title: f.title, size: up.bytes.length });
        }
        return ok({ files: done });
      }
      case 'assistant.threads.setStatus':
        emu.statuses.push({
          channel_id: args.channel_id,
          thread_ts: args.thread_ts,
          status: String(args.status ?? ''),
        });
        return ok();
      case 'assistant.threads.setSuggestedPrompts':
        emu.suggestedPrompts.push({
          channel_id: args.channel_id,
          thread_ts: args.thread_ts,
          prompts: decodeJsonField(args.prompts),
        });
        return ok();
      case 'apps.connections.open':
        return ok({ url: `${url.replace(/^http/, 'ws')}/socket?ticket=${sockets.size + 1}` });
      default:
        return fail('unknown_method');
    }
  }

  /** Slack's streamed messages, with the rules its documentation gives (see `streams`). */
  function stream(method: string, args: Record<string, any>, blocks: any): { status: number; body: any } {
    const ok = (extra: Record<string, unknown> = {}) => ({ status: 200, body: { ok: true, ...extra } });
    const fail = (error: string) => ({ status: 200, body: { ok: false, error } });
    const markdown = args.markdown_text === undefined ? undefined : String(args.markdown_text);
    if (markdown !== undefined && markdown.length > STREAM_TEXT_MAX) return fail('msg_too_long');
    const chunks = decodeJsonField(args.chunks);
    const badChunks = validateChunks(chunks, !emu.taskCards.refuse, !emu.markdownBlocks.refuse);
    if (badChunks) return fail(badChunks);
    if (method === 'chat.startStream') {
      if (!args.channel) return fail('channel_not_found');
      if (!args.thread_ts) return fail('invalid_arguments');
      if (!markdown && !args.chunks) return fail('invalid_arguments');
      // Outside a DM a stream is for someone: their user and team.
      if (!String(args.channel).startsWith('D') && (!args.recipient_user_id || !args.recipient_team_id))
        return fail('invalid_arguments');
      const ts = nextTs();
      const text = markdown ?? '';
      const msg: EmuMessage = {
        channel: args.channel,
        ts,
        thread_ts: String(args.thread_ts),
        text,
        user: botUserId,
        bot_id: botId,
        history: [{ text }],
        streaming: true,
        streamStartedAt: Date.now(),
      };
      applyChunks(msg, chunks);
      if (chunks) msg.history[0]!.text = msg.text;
      emu.messages.push(msg);
      return ok({ channel: args.channel, ts });
    }
    const msg = emu.messages.find((m) => m.channel === args.channel && m.ts === args.ts);
    if (!msg) return fail('message_not_found');
    if (msg.streaming && Date.now() - (msg.streamStartedAt ?? 0) >= emu.streams.expiryMs) msg.streaming = false;
    if (!msg.streaming) return fail('message_not_in_streaming_state');
    if (method === 'chat.appendStream' && !markdown && !args.chunks) return fail('invalid_arguments');
    const bad = validateBlocks(blocks, !emu.taskCards.refuse, !emu.markdownBlocks.refuse);
    if (bad) return fail(bad);
    if (msg.text.length + (markdown?.length ?? 0) > TEXT_MAX) return fail('msg_too_long');
    if (markdown) msg.text += markdown;
    applyChunks(msg, chunks);
    if (method === 'chat.stopStream') {
      msg.streaming = false;
      if (blocks) msg.blocks = blocks;
    }
    if (markdown || chunks || method === 'chat.stopStream') msg.history.push({ text: msg.text, blocks: msg.blocks });
    return ok({ channel: msg.channel, ts: msg.ts });
  }

  async function readRaw(req: http.IncomingMessage): Promise<Buffer> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    return Buffer.concat(chunks);
  }

  async function parseArgs(req: http.IncomingMessage, raw: Buffer): Promise<Record<string, any>> {
    const type = req.headers['content-type'] ?? '';
    if (type.includes('application/json')) return JSON.parse(raw.toString('utf8') || '{}');
    if (type.includes('multipart/form-data')) {
      const form = await new Response(new Uint8Array(raw), { headers: { 'content-type': type } }).formData();
      const out: Record<string, any> = {};
      for (const [k, v] of form.entries()) out[k] = typeof v === 'string' ? v : Buffer.from(await v.arrayBuffer());
      return out;
    }
    return Object.fromEntries(new URLSearchParams(raw.toString('utf8')));
  }

  const holds: Array<{
    method: string;
    match?: (args: Record<string, any>) => boolean;
    phase: 'before' | 'after';
    arrived: () => void;
    release: () => void;
  }> = [];
  emu.hold = (method, options = {}) => {
    let arrived!: () => void;
    const promise = new Promise<void>((resolve) => {
      arrived = resolve;
    });
    const h = { method, match: options.match, phase: options.phase ?? 'before', arrived, release: () => undefined };
    holds.push(h);
    return { arrived: promise, release: () => h.release() };
  };

  const server = http.createServer(async (req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    const raw = await readRaw(req);
    const send = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
    };
    if (path.startsWith('/api/')) {
      const method = path.slice('/api/'.length);
      let args: Record<string, any>;
      try {
        args = await parseArgs(req, raw);
      } catch {
        send(200, { ok: false, error: 'invalid_form_data' });
        return;
      }
      const hold = holds.find((h) => h.method === method && (!h.match || h.match(args)));
      let released: Promise<boolean> | null = null;
      if (hold) {
        holds.splice(holds.indexOf(hold), 1);
        // Settles true on release, false when the client goes away first (it was killed).
        released = new Promise<boolean>((resolve) => {
          res.on('close', () => resolve(false));
          hold.release = () => resolve(true);
        });
        if (hold.phase === 'before') {
          hold.arrived();
          if (!(await released)) return;
          released = null;
        }
      }
      const r = api(method, args, req.headers.authorization);
      const error = (r.body as { error?: string } | undefined)?.error;
      emu.calls.push({ method, args, status: r.status, ...(error ? { error } : {}) });
      if (released) {
        hold?.arrived();
        if (!(await released)) return;
      }
      const drop = drops.get(method) ?? 0;
      if (drop > 0 && r.status === 200) {
        drops.set(method, drop - 1);
        req.socket.destroy();
        return;
      }
      send(r.status, r.body, r.headers);
      return;
    }
    const upload = /^\/upload\/([^/]+)$/.exec(path);
    if (upload && req.method === 'POST') {
      const up = emu.uploads.find((u) => u.id === upload[1]);
      if (!up) return send(404, { ok: false });
      const args = await parseArgs(req, raw);
      const file = Object.values(args).find((v) => Buffer.isBuffer(v)) as Buffer | undefined;
      up.bytes = file ?? raw;
      res.writeHead(200, { 'content-type': 'text/plain' }).end(`OK - ${up.bytes.length}`);
      return;
    }
    const file = /^\/files\/([^/]+)\//.exec(path);
    if (file && req.method === 'GET') {
      if (req.headers.authorization !== `Bearer ${botToken}`) {
        res.writeHead(403, { 'content-type': 'text/html' }).end('<html>login</html>');
        return;
      }
      const hostedFile = hosted.get(file[1] ?? '');
      if (!hostedFile) return send(404, { ok: false });
      res
        .writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': hostedFile.bytes.length })
        .end(hostedFile.bytes);
      return;
    }
    send(404, { ok: false, error: 'not_found' });
  });

  const wss = new WebSocketServer({ noServer: true });
  server.on('upgrade', (req, socket, head) => {
    if (!(req.url ?? '').startsWith('/socket')) {
      socket.destroy();
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      sockets.add(ws);
      // Slack pings the client; without pings the SDK assumes a dead connection after 30 s.
      const ping = setInterval(() => ws.ping(), 2_000);
      ws.on('close', () => {
        clearInterval(ping);
        sockets.delete(ws);
      });
      ws.on('message', (data) => {
        let msg: any;
        try {
          msg = JSON.parse(String(data));
        } catch {
          return;
        }
        const resolve = msg?.envelope_id ? pendingAcks.get(msg.envelope_id) : undefined;
        resolve?.(msg.payload);
      });
      ws.send(
        JSON.stringify({
          type: 'hello',
          num_connections: sockets.size,
          debug_info: { host: 'emu' },
          connection_info: { app_id: 'A0APP' },
        }),
      );
    });
  });

  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  emu.apiUrl = `${url}/api/`;
  return emu;
}
