// biome-ignore-all lint/suspicious/noExplicitAny: the emulator handles free-form Bot API JSON
/**
 * A Telegram Bot API emulator on 127.0.0.1 for tests: a real grammY bot talks HTTP to it
 * (`apiRoot`). It implements long polling (offset/limit/timeout), webhooks (delivers injected
 * updates to the registered URL with the secret header), the send/edit methods with Telegram's
 * HTML validation and "message is not modified", multipart uploads, getFile + downloads,
 * message drafts (`sendMessageDraft`: private chats only, `draft_id` non-zero, 4096 characters,
 * gone when the bot sends a message or after `draftTtlMs`; Stop pressed by the test delivers
 * `stopped_message_generation`), rich messages (`sendRichMessage`, `sendRichMessageDraft`,
 * `editMessageText` with `rich_message`; the payload and its documented limits checked in
 * `telegram-rich.ts`), ephemeral messages (`ephemeral_message_parameters`: groups only, the
 * receiver a member, recorded with who may see them; a server that refuses or drops the field
 * on demand), `allowed_updates` (an update of a type not asked for is never
 * delivered), and injected failures (429 with `retry_after`, 5xx, entity rejection, a method
 * the server does not know).
 */
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { checkTelegramHtml } from './telegram-html.js';
import { decodeParams, parseMultipart } from './telegram-multipart.js';
import { checkRichMessage } from './telegram-rich.js';
import type {
  ApiCall,
  Draft,
  EphemeralMessage,
  EmuUser,
  Failure,
  InjectOptions,
  SentMessage,
  TelegramEmulator,
} from './telegram-types.js';

export type {
  ApiCall,
  Draft,
  EmuUser,
  EphemeralMessage,
  InjectOptions,
  SentMessage,
  TelegramEmulator,
} from './telegram-types.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A request held on its way in (`before`: not processed yet) or out (`after`: processed, answer withheld). */
interface Hold {
  method: string;
  match?: (params: Record<string, any>) => boolean;
  phase: 'before' | 'after';
  arrived: () => void;
  release: () => void;
}

/** Start an emulator with a fixed bot identity. */
export async function startTelegramEmulator(
  options: {
    token?: string;
    /** Called whenever a text message is sent or edited (benchmarks time replies with it). */
    onText?: (msg: SentMessage) => void;
    /** Called with every API method as it arrives (benchmarks detect readiness with it). */
    onCall?: (method: string) => void;
    /** Keep no record of calls (long benchmark runs). */
    recordCalls?: boolean;
    /**
     * How long an idle client connection is kept (default 1 s, so tests end quickly). Node's HTTP
     * client takes the server's `Keep-Alive: timeout=1` as "do not reuse", so with the default
     * every call opens a connection; benchmarks keep connections as api.telegram.org does.
     */
    keepAliveTimeoutMs?: number;
    /** How long a draft shows without being sent again (Telegram: about 30 s). */
    draftTtlMs?: number;
  } = {},
): Promise<TelegramEmulator> {
  const token = options.token ?? '123456:TEST-token';
  const botUser = { id: 999000, is_bot: true, first_name: 'Switchboard', username: 'switchboard_test_bot' };
  const updates: any[] = [];
  let nextUpdateId = 1000;
  let nextFileId = 1;
  const files = new Map<string, { bytes: Buffer; size: number; path: string }>();
  const chats = new Map<number, SentMessage[]>();
  const nextMessageId = new Map<number, number>();
  const failures = new Map<string, Failure[]>();
  let entityRejections = 0;
  let waiters: Array<() => void> = [];
  let callbackCounter = 0;
  const calls: ApiCall[] = [];
  const callbackAnswers: TelegramEmulator['callbackAnswers'] = [];
  const chatActions: TelegramEmulator['chatActions'] = [];
  const dropPendingCalls: boolean[] = [];
  let pollSeq = 0;
  let pollsInFlight = 0;
  const conflicts = { count: 0 };
  const state: { webhook: { url: string; secret?: string } | null; commands: any[] } = { webhook: null, commands: [] };
  let closed = false;
  const holds: Hold[] = [];
  const blocked = new Set<number>();
  const rates = new Map<string, { rate: number; failure: Failure; random: () => number }>();
  /** The draft each chat (and topic) shows now, by `<chat>:<topic>`; every draft ever shown. */
  const drafts = new Map<string, Draft>();
  const draftLog: Draft[] = [];
  const draftTtlMs = options.draftTtlMs ?? 30_000;
  const unknownMethods = new Set<string>();
  /** Ephemeral messages: whether the server takes them, who is in each group, who made each tap. */
  let ephemeralSupport: 'on' | 'refuse' | 'ignore' = 'on';
  const ephemeralLog: EphemeralMessage[] = [];
  let ephemeralCounter = 0;
  const members = new Map<number, Set<number>>();
  const membersOf = (chatId: number): Set<number> => {
    let set = members.get(chatId);
    if (!set) {
      set = new Set();
      members.set(chatId, set);
    }
    return set;
  };
  const callbackFrom = new Map<string, number>();
  /** `allowed_updates` of the last getUpdates or setWebhook that named them (Telegram keeps them). */
  let allowedUpdates: string[] | null = null;
  const draftKey = (chatId: number, threadId?: number) => `${chatId}:${threadId ?? ''}`;
  const liveDraft = (chatId: number, threadId?: number): Draft | undefined => {
    const d = drafts.get(draftKey(chatId, threadId));
    if (d && Date.now() - d.at > draftTtlMs) drafts.delete(draftKey(chatId, threadId));
    return drafts.get(draftKey(chatId, threadId));
  };
  /** A message from the bot replaces the chat's draft, as in Telegram's clients. */
  const dropDraft = (params: Record<string, any>) =>
    drafts.delete(
      draftKey(Number(params.chat_id), params.message_thread_id ? Number(params.message_thread_id) : undefined),
    );

  const wake = () => {
    const w = waiters;
    waiters = [];
    for (const fn of w) fn();
  };

  const allocMessageId = (chatId: number) => {
    const id = (nextMessageId.get(chatId) ?? 100) + 1;
    nextMessageId.set(chatId, id);
    return id;
  };

  const chatOf = (chatId: number): SentMessage[] => {
    let list = chats.get(chatId);
    if (!list) {
      list = [];
      chats.set(chatId, list);
    }
    return list;
  };

  const chatObject = (chatId: number, type = chatId > 0 ? 'private' : 'supergroup') =>
    type === 'private'
      ? { id: chatId, type, first_name: 'User' }
      : { id: chatId, type, title: 'Group', is_forum: true };

  const toApiMessage = (m: SentMessage) => ({
    message_id: m.message_id,
    date: Math.floor(Date.now() / 1000),
    chat: chatObject(m.chat_id),
    from: botUser,
    ...(m.message_thread_id ? { message_thread_id: m.message_thread_id, is_topic_message: true } : {}),
    ...(m.kind === 'text' ? { text: m.plain } : { caption: m.caption }),
    ...(m.kind === 'document'
      ? { document: { file_id: 'sent', file_unique_id: 'sent', file_name: m.file?.name } }
      : {}),
    ...(m.kind === 'voice' ? { voice: { file_id: 'sent', file_unique_id: 'sent', duration: 1 } } : {}),
    ...(m.kind === 'photo' ? { photo: [{ file_id: 'sent', file_unique_id: 'sent', width: 1, height: 1 }] } : {}),
    ...(m.reply_markup ? { reply_markup: m.reply_markup } : {}),
  });

  const pushUpdate = (update: Record<string, unknown>): number => {
    const id = nextUpdateId++;
    // Telegram never sends an update of a type the bot did not ask for.
    const type = Object.keys(update)[0] as string;
    if (allowedUpdates && allowedUpdates.length > 0 && !allowedUpdates.includes(type)) return id;
    updates.push({ update_id: id, ...update });
    wake();
    if (state.webhook) void deliverWebhooks();
    return id;
  };

  let delivering = false;
  async function deliverWebhooks(): Promise<void> {
    if (delivering) return;
    delivering = true;
    try {
      while (state.webhook && updates.length > 0 && !closed) {
        const update = updates[0];
        const hook = state.webhook;
        try {
          const res = await fetch(hook.url, {
            method: 'POST',
            headers: {
              'content-type': 'application/json',
              ...(hook.secret ? { 'x-telegram-bot-api-secret-token': hook.secret } : {}),
            },
            body: JSON.stringify(update),
          });
          await res.arrayBuffer();
          if (res.ok) updates.shift();
          else await sleep(50);
        } catch {
          await sleep(50);
        }
      }
    } finally {
      delivering = false;
    }
  }

  /**
   * `sendMessage` with `ephemeral_message_parameters`, by the documented rules: groups only, a
   * receiver who is in the group (the emulator knows who wrote or tapped there, and who
   * `join`ed), a `callback_query_id` of a tap by that receiver; the answer has message id 0, the
   * receiver and an `ephemeral_message_id`. Recorded apart from the chat's messages.
   */
  const sendEphemeral = (chatId: number, params: Record<string, any>): Reply => {
    const raw = params.ephemeral_message_parameters;
    const p = (typeof raw === 'string' ? JSON.parse(raw) : raw) as Record<string, unknown> | null;
    const receiver = Number(p?.receiver_user_id);
    if (!Number.isInteger(receiver) || receiver <= 0) return bad('Bad Request: receiver_user_id is invalid');
    if (!(chatId < 0)) return bad('Bad Request: ephemeral messages can be sent only to group chats');
    if (!membersOf(chatId).has(receiver)) return bad('Bad Request: receiver user is not a member of the chat');
    const queryId = p?.callback_query_id === undefined ? undefined : String(p.callback_query_id);
    if (queryId !== undefined && callbackFrom.get(queryId) !== receiver)
      return bad('Bad Request: callback query not found');
    const v = validateText(params.text, params.parse_mode);
    if ('status' in v) return v;
    const ephemeralId = ++ephemeralCounter;
    const threadId = params.message_thread_id ? Number(params.message_thread_id) : undefined;
    ephemeralLog.push({
      chat_id: chatId,
      ...(threadId ? { message_thread_id: threadId } : {}),
      receiver_user_id: receiver,
      ...(queryId ? { callback_query_id: queryId } : {}),
      ephemeral_message_id: ephemeralId,
      text: String(params.text),
      plain: v.plain,
      parse_mode: params.parse_mode,
    });
    return okReply({
      message_id: 0,
      date: Math.floor(Date.now() / 1000),
      chat: chatObject(chatId),
      from: botUser,
      ...(threadId ? { message_thread_id: threadId, is_topic_message: true } : {}),
      receiver_user: { id: receiver, is_bot: false, first_name: `User${receiver}` },
      ephemeral_message_id: ephemeralId,
      text: v.plain,
    });
  };

  type Reply = { status: number; body: any };
  const okReply = (result: unknown): Reply => ({ status: 200, body: { ok: true, result } });
  const bad = (description: string, status = 400): Reply => ({
    status,
    body: { ok: false, error_code: status, description },
  });

  const validateText = (
    text: string | undefined,
    parseMode: string | undefined,
    limit = 4096,
  ): { plain: string } | Reply => {
    if (text === undefined || text === '') return bad('Bad Request: message text is empty');
    let plain = text;
    if (parseMode === 'HTML') {
      if (entityRejections > 0) {
        entityRejections--;
        return bad('Bad Request: can\'t parse entities: Unsupported start tag "injected" at byte offset 0');
      }
      const check = checkTelegramHtml(text);
      if (!check.ok) return bad(check.description);
      plain = check.text;
    }
    if (plain.trim() === '') return bad('Bad Request: message text is empty');
    if (plain.length > limit)
      return bad(limit === 4096 ? 'Bad Request: message is too long' : 'Bad Request: message caption is too long');
    return { plain };
  };

  async function handle(
    method: string,
    params: Record<string, any>,
    upload: Record<string, { name: string; bytes: Buffer }>,
    clientGone: Promise<void> = new Promise(() => {}),
  ): Promise<Reply> {
    const queued = failures.get(method);
    const rated = rates.get(method);
    const randomFailure = rated && rated.random() < rated.rate ? rated.failure : undefined;
    if (unknownMethods.has(method)) return bad('Not Found', 404);
    if ((queued && queued.length > 0) || randomFailure) {
      const f = (randomFailure ?? queued?.shift()) as Failure;
      if (f.status === 429) {
        const retryAfter = f.retryAfter ?? 1;
        return {
          status: 429,
          body: {
            ok: false,
            error_code: 429,
            description: `Too Many Requests: retry after ${retryAfter}`,
            parameters: { retry_after: retryAfter },
          },
        };
      }
      return bad(f.description ?? 'Internal Server Error', f.status);
    }
    if (params.chat_id !== undefined && blocked.has(Number(params.chat_id)) && method !== 'getUpdates') {
      return {
        status: 403,
        body: { ok: false, error_code: 403, description: 'Forbidden: bot was blocked by the user' },
      };
    }
    switch (method) {
      case 'getMe':
        return okReply(botUser);
      case 'deleteWebhook':
        dropPendingCalls.push(params.drop_pending_updates === true || params.drop_pending_updates === 'true');
        if (params.drop_pending_updates === true || params.drop_pending_updates === 'true') updates.length = 0;
        state.webhook = null;
        return okReply(true);
      case 'setWebhook':
        if (!params.url) return bad('Bad Request: bad webhook: An HTTPS URL must be provided for webhook');
        state.webhook = { url: String(params.url), secret: params.secret_token };
        if (params.allowed_updates) allowedUpdates = asList(params.allowed_updates);
        wake(); // a pending long poll ends with 409, as on Telegram
        void deliverWebhooks();
        return okReply(true);
      case 'getWebhookInfo':
        return okReply({
          url: state.webhook?.url ?? '',
          has_custom_certificate: false,
          pending_update_count: updates.length,
        });
      case 'setMyCommands':
        state.commands = params.commands ?? [];
        return okReply(true);
      case 'getUpdates': {
        if (state.webhook)
          return bad(
            "Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to delete the webhook first",
            409,
          );
        const offset = Number(params.offset ?? 0);
        const limit = Math.min(100, Math.max(1, Number(params.limit ?? 100)));
        const timeout = Number(params.timeout ?? 0);
        if (params.allowed_updates) allowedUpdates = asList(params.allowed_updates);
        if (offset > 0) while (updates.length && updates[0].update_id < offset) updates.shift();
        // Two pollers on one token: as on Telegram, a new getUpdates ends the one in flight with 409.
        const poll = ++pollSeq;
        if (pollsInFlight > 0) {
          conflicts.count++;
          wake();
        }
        pollsInFlight++;
        try {
          if (updates.length === 0 && timeout > 0) {
            // A client that hangs up (a poller stopping) no longer holds the long poll.
            await new Promise<void>((resolve) => {
              const t = setTimeout(resolve, timeout * 1000);
              waiters.push(() => {
                clearTimeout(t);
                resolve();
              });
              void clientGone.then(() => {
                clearTimeout(t);
                resolve();
              });
            });
          }
        } finally {
          pollsInFlight--;
        }
        if (poll !== pollSeq)
          return bad(
            'Conflict: terminated by other getUpdates request; make sure that only one bot instance is running',
            409,
          );
        if (state.webhook) return bad('Conflict: terminated by setWebhook request', 409);
        return okReply(updates.slice(0, limit));
      }
      case 'sendChatAction':
        chatActions.push({ chat_id: Number(params.chat_id), action: String(params.action) });
        return okReply(true);
      case 'answerCallbackQuery':
        callbackAnswers.push({
          callback_query_id: String(params.callback_query_id),
          text: params.text,
          show_alert: params.show_alert === true || params.show_alert === 'true',
        });
        return okReply(true);
      case 'sendMessageDraft': {
        const chatId = Number(params.chat_id);
        if (!(chatId > 0)) return bad('Bad Request: drafts can be sent to private chats only');
        const draftId = Number(params.draft_id);
        if (!Number.isInteger(draftId) || draftId === 0) return bad('Bad Request: draft_id must be non-zero');
        const empty = params.text === undefined || params.text === '';
        const v = empty ? { plain: '' } : validateText(params.text, params.parse_mode);
        if ('status' in v) return v;
        const threadId = params.message_thread_id ? Number(params.message_thread_id) : undefined;
        const draft: Draft = {
          chat_id: chatId,
          message_thread_id: threadId,
          draft_id: draftId,
          text: String(params.text ?? ''),
          plain: v.plain,
          can_stop: params.can_stop === true || params.can_stop === 'true',
          at: Date.now(),
        };
        drafts.set(draftKey(chatId, threadId), draft);
        draftLog.push(draft);
        return okReply(true);
      }
      case 'sendRichMessageDraft': {
        const chatId = Number(params.chat_id);
        if (!(chatId > 0)) return bad('Bad Request: drafts can be sent to private chats only');
        const draftId = Number(params.draft_id);
        if (!Number.isInteger(draftId) || draftId === 0) return bad('Bad Request: draft_id must be non-zero');
        const v = checkRichMessage(params.rich_message);
        if ('description' in v) return bad(v.description);
        const threadId = params.message_thread_id ? Number(params.message_thread_id) : undefined;
        const draft: Draft = {
          chat_id: chatId,
          message_thread_id: threadId,
          draft_id: draftId,
          text: v.markdown,
          plain: v.plain,
          rich: v.markdown,
          can_stop: params.can_stop === true || params.can_stop === 'true',
          at: Date.now(),
        };
        drafts.set(draftKey(chatId, threadId), draft);
        draftLog.push(draft);
        return okReply(true);
      }
      case 'sendRichMessage': {
        const chatId = Number(params.chat_id);
        const v = checkRichMessage(params.rich_message);
        if ('description' in v) return bad(v.description);
        dropDraft(params);
        const msg: SentMessage = {
          message_id: allocMessageId(chatId),
          chat_id: chatId,
          message_thread_id: params.message_thread_id ? Number(params.message_thread_id) : undefined,
          kind: 'text',
          text: v.markdown,
          plain: v.plain,
          rich: v.markdown,
          reply_markup: params.reply_markup,
          history: [v.markdown],
        };
        chatOf(chatId).push(msg);
        options.onText?.(msg);
        return okReply(toApiMessage(msg));
      }
      case 'sendMessage': {
        const chatId = Number(params.chat_id);
        if (params.ephemeral_message_parameters !== undefined) {
          if (ephemeralSupport === 'refuse') return bad('Bad Request: ephemeral messages are not supported');
          if (ephemeralSupport === 'on') return sendEphemeral(chatId, params);
          // 'ignore': a server that does not know the field drops it and posts to everyone.
        }
        const v = validateText(params.text, params.parse_mode);
        if ('status' in v) return v;
        dropDraft(params);
        const msg: SentMessage = {
          message_id: allocMessageId(chatId),
          chat_id: chatId,
          message_thread_id: params.message_thread_id ? Number(params.message_thread_id) : undefined,
          kind: 'text',
          text: String(params.text),
          plain: v.plain,
          parse_mode: params.parse_mode,
          reply_markup: params.reply_markup,
          history: [String(params.text)],
        };
        chatOf(chatId).push(msg);
        options.onText?.(msg);
        return okReply(toApiMessage(msg));
      }
      case 'editMessageText':
      case 'editMessageReplyMarkup': {
        const chatId = Number(params.chat_id);
        const msg = chatOf(chatId).find((m) => m.message_id === Number(params.message_id));
        if (!msg) return bad('Bad Request: message to edit not found');
        const nextMarkup = params.reply_markup ?? undefined;
        const sameMarkup = JSON.stringify(nextMarkup ?? null) === JSON.stringify(msg.reply_markup ?? null);
        if (method === 'editMessageReplyMarkup') {
          if (sameMarkup)
            return bad(
              'Bad Request: message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message',
            );
          msg.reply_markup = nextMarkup;
          return okReply(toApiMessage(msg));
        }
        // A server without rich messages reads an edit with only `rich_message` as one without text.
        if (params.rich_message !== undefined && !unknownMethods.has('sendRichMessage')) {
          if (params.text !== undefined) return bad("Bad Request: text and rich_message can't be used together");
          const r = checkRichMessage(params.rich_message);
          if ('description' in r) return bad(r.description);
          if (r.markdown === msg.rich && sameMarkup)
            return bad(
              'Bad Request: message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message',
            );
          msg.text = r.markdown;
          msg.plain = r.plain;
          msg.rich = r.markdown;
          msg.parse_mode = undefined;
          msg.reply_markup = nextMarkup;
          msg.history.push(msg.text);
          options.onText?.(msg);
          return okReply(toApiMessage(msg));
        }
        const v = validateText(params.text, params.parse_mode);
        if ('status' in v) return v;
        if (
          v.plain === msg.plain &&
          msg.rich === undefined &&
          sameMarkup &&
          (params.parse_mode ?? '') === (msg.parse_mode ?? '')
        ) {
          return bad(
            'Bad Request: message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message',
          );
        }
        msg.text = String(params.text);
        msg.plain = v.plain;
        msg.rich = undefined;
        msg.parse_mode = params.parse_mode;
        msg.reply_markup = nextMarkup;
        msg.history.push(msg.text);
        options.onText?.(msg);
        return okReply(toApiMessage(msg));
      }
      case 'deleteMessage': {
        const msg = chatOf(Number(params.chat_id)).find((m) => m.message_id === Number(params.message_id));
        if (!msg || msg.deleted) return bad('Bad Request: message to delete not found');
        msg.deleted = true;
        return okReply(true);
      }
      case 'sendDocument':
      case 'sendPhoto':
      case 'sendVoice': {
        const field = method === 'sendDocument' ? 'document' : method === 'sendPhoto' ? 'photo' : 'voice';
        const ref = String(params[field] ?? '');
        const file = ref.startsWith('attach://') ? upload[ref.slice('attach://'.length)] : upload[field];
        if (!file) return bad(`Bad Request: there is no ${field} in the request`);
        if (params.caption !== undefined) {
          const v = validateText(params.caption, params.parse_mode, 1024);
          if ('status' in v) return v;
        }
        if (method === 'sendPhoto' && file.bytes.length > 10 * 1024 * 1024)
          return bad('Bad Request: PHOTO_INVALID_DIMENSIONS');
        const chatId = Number(params.chat_id);
        dropDraft(params);
        const kind = field === 'document' ? 'document' : field;
        const msg: SentMessage = {
          message_id: allocMessageId(chatId),
          chat_id: chatId,
          message_thread_id: params.message_thread_id ? Number(params.message_thread_id) : undefined,
          kind,
          text: '',
          plain: '',
          caption: params.caption,
          file,
          history: [],
        };
        chatOf(chatId).push(msg);
        options.onText?.(msg);
        return okReply(toApiMessage(msg));
      }
      case 'getFile': {
        const f = files.get(String(params.file_id));
        if (!f) return bad('Bad Request: invalid file_id');
        if (f.size > 20 * 1024 * 1024) return bad('Bad Request: file is too big');
        return okReply({
          file_id: params.file_id,
          file_unique_id: `u${params.file_id}`,
          file_size: f.size,
          file_path: f.path,
        });
      }
      default:
        return bad(`Not Found: method ${method} not emulated`, 404);
    }
  }

  const server = http.createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const fileMatch = /^\/file\/bot([^/]+)\/(.+)$/.exec(url.pathname);
    if (fileMatch) {
      const f =
        fileMatch[1] === token
          ? [...files.values()].find((x) => x.path === decodeURIComponent(fileMatch[2] as string))
          : undefined;
      if (!f) {
        res.writeHead(404).end();
        return;
      }
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(f.bytes.length) });
      res.end(f.bytes);
      return;
    }
    const m = /^\/bot([^/]+)\/([A-Za-z]+)$/.exec(url.pathname);
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks);
    const send = (r: Reply) => {
      if (res.destroyed) return;
      res.writeHead(r.status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(r.body));
    };
    if (!m) return send(bad('Not Found', 404));
    if (m[1] !== token) return send(bad('Unauthorized', 401));
    const method = m[2] as string;
    let params: Record<string, any> = Object.fromEntries(url.searchParams);
    let upload: Record<string, { name: string; bytes: Buffer }> = {};
    const ctype = req.headers['content-type'] ?? '';
    if (ctype.includes('application/json') && body.length) params = { ...params, ...JSON.parse(body.toString('utf8')) };
    else if (ctype.includes('multipart/form-data')) {
      const boundary = /boundary=([^;]+)/.exec(ctype)?.[1] ?? '';
      const parsed = parseMultipart(body, boundary);
      params = { ...params, ...decodeParams(parsed.fields) };
      upload = parsed.files;
    } else if (ctype.includes('application/x-www-form-urlencoded')) {
      params = { ...params, ...decodeParams(Object.fromEntries(new URLSearchParams(body.toString('utf8')))) };
    }
    options.onCall?.(method);
    const hold = holds.find((h) => h.method === method && (!h.match || h.match(params)));
    if (hold) {
      holds.splice(holds.indexOf(hold), 1);
      // Settles true on release, false when the client goes away first (e.g. it was killed).
      const gone = new Promise<boolean>((resolve) => {
        res.on('close', () => resolve(false));
        hold.release = () => resolve(true);
      });
      if (hold.phase === 'before') {
        hold.arrived();
        if (!(await gone)) return;
      } else {
        const reply = await handle(method, params, upload);
        if (options.recordCalls !== false) calls.push({ method, params, ok: reply.status === 200, at: Date.now() });
        hold.arrived();
        if (await gone) send(reply);
        return;
      }
    }
    const clientGone = new Promise<void>((resolve) => res.once('close', () => resolve()));
    const reply = await handle(method, params, upload, clientGone);
    if (options.recordCalls !== false) calls.push({ method, params, ok: reply.status === 200, at: Date.now() });
    send(reply);
  });
  server.keepAliveTimeout = options.keepAliveTimeoutMs ?? 1000;
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;

  function asList(value: unknown): string[] {
    return Array.isArray(value) ? value.map(String) : (JSON.parse(String(value)) as string[]);
  }

  const addFile = (bytes: Buffer, declaredSize?: number): string => {
    const id = `file${nextFileId++}`;
    files.set(id, { bytes, size: declaredSize ?? bytes.length, path: `documents/${id}.bin` });
    return id;
  };

  const baseMessage = (from: EmuUser, opts: InjectOptions = {}) => {
    const chatId = opts.chatId ?? from.id;
    const type = opts.chatType ?? (chatId > 0 ? 'private' : 'supergroup');
    membersOf(chatId).add(from.id);
    return {
      message_id: allocMessageId(chatId),
      date: Math.floor(Date.now() / 1000),
      chat: chatObject(chatId, type),
      from: { is_bot: false, first_name: from.first_name ?? `User${from.id}`, ...from },
      ...(opts.threadId ? { message_thread_id: opts.threadId, is_topic_message: true } : {}),
      ...(opts.replyTo
        ? { reply_to_message: toApiMessage(chatOf(chatId).find((x) => x.message_id === opts.replyTo) as SentMessage) }
        : {}),
    };
  };

  return {
    apiRoot: `http://127.0.0.1:${port}`,
    token,
    botUser,
    calls,
    callbackAnswers,
    chatActions,
    get commands() {
      return state.commands;
    },
    dropPendingCalls,
    get getUpdatesConflicts() {
      return conflicts.count;
    },
    get webhook() {
      return state.webhook;
    },
    pendingUpdates: () => [...updates],
    messages: (chatId) => chatOf(chatId).filter((x) => !x.deleted),
    draft: (chatId, threadId) => liveDraft(chatId, threadId),
    drafts: (chatId) => draftLog.filter((d) => d.chat_id === chatId),
    pressStop(chatId, threadId) {
      const d = liveDraft(chatId, threadId);
      if (!d?.can_stop) throw new Error(`no draft with a Stop button in chat ${chatId}`);
      drafts.delete(draftKey(chatId, threadId));
      return pushUpdate({
        stopped_message_generation: {
          chat: chatObject(chatId, 'private'),
          ...(threadId ? { message_thread_id: threadId } : {}),
          draft_id: d.draft_id,
        },
      });
    },
    forget(method) {
      unknownMethods.add(method);
    },
    ephemerals: (chatId) => ephemeralLog.filter((e) => e.chat_id === chatId),
    ephemeralSupport(mode) {
      ephemeralSupport = mode;
    },
    join(chatId, user) {
      membersOf(chatId).add(user.id);
    },
    sendText(from, text, opts = {}) {
      const entities =
        opts.entities ??
        (text.startsWith('/')
          ? [{ type: 'bot_command', offset: 0, length: text.split(/\s/)[0]?.length ?? 1 }]
          : undefined);
      return pushUpdate({ message: { ...baseMessage(from, opts), text, ...(entities ? { entities } : {}) } });
    },
    sendFile(from, file, opts = {}) {
      const fileId = addFile(file.bytes, file.declaredSize);
      const size = file.declaredSize ?? file.bytes.length;
      const media =
        file.kind === 'photo'
          ? { photo: [{ file_id: fileId, file_unique_id: `u${fileId}`, width: 90, height: 90, file_size: size }] }
          : file.kind === 'voice'
            ? {
                voice: {
                  file_id: fileId,
                  file_unique_id: `u${fileId}`,
                  duration: 2,
                  mime_type: 'audio/ogg',
                  file_size: size,
                },
              }
            : { document: { file_id: fileId, file_unique_id: `u${fileId}`, file_name: file.name, file_size: size } };
      return pushUpdate({
        message: { ...baseMessage(from, opts), ...media, ...(file.caption ? { caption: file.caption } : {}) },
      });
    },
    tap(from, chatId, messageId, data) {
      const msg = chatOf(chatId).find((x) => x.message_id === messageId);
      if (!msg) throw new Error(`no message ${messageId} in chat ${chatId}`);
      const id = `cb${++callbackCounter}`;
      membersOf(chatId).add(from.id);
      callbackFrom.set(id, from.id);
      pushUpdate({
        callback_query: {
          id,
          from: { is_bot: false, first_name: from.first_name ?? `User${from.id}`, ...from },
          chat_instance: String(chatId),
          message: toApiMessage(msg),
          data,
        },
      });
      return id;
    },
    fail(method, count, failure) {
      const list = failures.get(method) ?? [];
      for (let i = 0; i < count; i++) list.push(failure);
      failures.set(method, list);
    },
    block(chatId) {
      blocked.add(chatId);
    },
    hold(method, options = {}) {
      let arrived!: () => void;
      const promise = new Promise<void>((resolve) => {
        arrived = resolve;
      });
      const h: Hold = {
        method,
        match: options.match,
        phase: options.phase ?? 'before',
        arrived,
        release: () => undefined,
      };
      holds.push(h);
      return { arrived: promise, release: () => h.release() };
    },
    failRate(method, rate, failure, random = Math.random) {
      if (rate <= 0) rates.delete(method);
      else rates.set(method, { rate, failure, random });
    },
    rejectEntities(count) {
      entityRejections += count;
    },
    addFile,
    close: async () => {
      closed = true;
      wake();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
