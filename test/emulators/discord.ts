/**
 * A Discord emulator on 127.0.0.1 for end-to-end tests: the v10 REST routes the SDK
 * (`@discordjs/rest` / `@discordjs/core`) calls, with Discord's error shapes (401, 404 Unknown
 * Message, 429 with `retry_after` and rate-limit headers, 50035 for content over 2 000
 * characters, 40060 for an interaction acknowledged twice, 10062 for one acknowledged after 3 s),
 * and the gateway over WebSocket (HELLO, IDENTIFY → READY, heartbeats, RESUME, dispatches).
 * Test helpers play the people: a DM, a guild message mentioning the bot, a message in a thread,
 * a button click, the slash command; what the bot posted, edited and answered is kept to inspect.
 */
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { type WebSocket, WebSocketServer } from 'ws';

/** A person of the emulated Discord. */
export interface DiscordUser {
  id: string;
  username: string;
  global_name?: string;
  bot?: boolean;
}

/** A message as the emulator keeps it. */
export interface EmuMessage {
  id: string;
  channel_id: string;
  guild_id?: string;
  author: DiscordUser;
  content: string;
  embeds: unknown[];
  components: Array<{ type: number; components: Array<Record<string, unknown>> }>;
  attachments: Array<{ id: string; filename: string; size: number; url: string; content_type?: string }>;
  flags?: number;
  /** How many times it was edited. */
  edits: number;
  deleted: boolean;
  /** Bytes of files the bot uploaded with it, by name. */
  files: Record<string, Buffer>;
  /** Set for an interaction follow-up: the interaction's token. */
  interaction_token?: string;
  mentions: DiscordUser[];
}

/** An emulated channel: a DM (type 1), a guild text channel (0) or a public thread (11). */
export interface EmuChannel {
  id: string;
  type: 0 | 1 | 11;
  guild_id?: string;
  parent_id?: string;
  name?: string;
  recipients?: DiscordUser[];
}

/** An interaction the emulator sent and what the bot answered to it. */
export interface EmuInteraction {
  id: string;
  token: string;
  created: number;
  /** Callback bodies posted for it (`type` 4–7…); more than one is refused with 40060. */
  callbacks: Array<{ type: number; data?: Record<string, unknown> }>;
  /** Follow-up messages (ephemeral ones have flags 64). */
  followups: EmuMessage[];
  /** A deferred slash command's answer (its first edit of `@original`), with the deferral's flags. */
  original?: EmuMessage;
}

/** A failure to inject into the next matching request. */
export interface InjectedFailure {
  method: string;
  path: RegExp;
  status: number;
  body: Record<string, unknown>;
  headers?: Record<string, string>;
}

/** The running emulator. */
export interface DiscordEmulator {
  token: string;
  bot: DiscordUser;
  applicationId: string;
  guildId: string;
  /** REST root to give the SDK (`api` option): `http://127.0.0.1:<port>/api`. */
  apiRoot: string;
  /** Gateway WebSocket URL. */
  gatewayUrl: string;
  messages: Map<string, EmuMessage>;
  channels: Map<string, EmuChannel>;
  interactions: Map<string, EmuInteraction>;
  /** Application commands as last registered (PUT). */
  commands: Array<Record<string, unknown>>;
  /** Typing indicator calls by channel id. */
  typing: string[];
  /** Every REST request `METHOD /path` (without the version), in order. */
  requests: string[];
  /** Gateway IDENTIFY and RESUME payloads received. */
  identifies: number;
  resumes: number;
  /** Open gateway sessions. */
  sockets(): number;
  /** A guild text channel (created once per id). */
  guildChannel(id?: string): EmuChannel;
  /** The DM channel between the bot and `user`. */
  dmChannel(user: DiscordUser): EmuChannel;
  /** `user` writes to the bot in a DM. */
  dm(user: DiscordUser, text: string, files?: Array<{ name: string; data: Buffer }>): EmuMessage;
  /** `user` writes in a guild channel or thread; `mention` puts the bot's mention first. */
  guildMessage(user: DiscordUser, channelId: string, text: string, mention?: boolean): EmuMessage;
  /** `user` clicks a button (`custom_id`) on message `messageId`. */
  click(user: DiscordUser, messageId: string, customId: string): EmuInteraction;
  /** `user` runs `/switchboard command args` in `channelId`. */
  slash(user: DiscordUser, channelId: string, command: string, args?: string): EmuInteraction;
  /** The bot's live (not deleted) messages in a channel, oldest first. */
  botMessages(channelId: string): EmuMessage[];
  /** Fail the next request matching method and path once with this answer. */
  failNext(failure: InjectedFailure): void;
  /** Answer the next matching request with a 429 (Discord's body and headers). */
  rateLimitNext(method: string, path: RegExp, retryAfterSeconds: number): void;
  /** Drop every gateway connection (the bot resumes). */
  dropGateway(): void;
  /** Dispatch a raw gateway event to every session. */
  dispatch(t: string, d: unknown): void;
  close(): Promise<void>;
}

/** Discord's content limit for a message. */
export const CONTENT_LIMIT = 2000;

function json(res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  if (status === 204) {
    res.writeHead(204, headers).end();
    return;
  }
  res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
}

const unknown = (what: string, code: number) => ({ message: `Unknown ${what}`, code });

/** Start an emulator on a free port. */
export async function startDiscordEmulator(): Promise<DiscordEmulator> {
  let next = 1_100_000_000_000_000_000n;
  const id = () => String(next++);
  const token = 'emulated.discord.token';
  const bot: DiscordUser = { id: id(), username: 'switchboard', bot: true };
  const applicationId = bot.id;
  const guildId = id();
  const messages = new Map<string, EmuMessage>();
  const channels = new Map<string, EmuChannel>();
  const interactions = new Map<string, EmuInteraction>();
  const blobs = new Map<string, Buffer>();
  const failures: InjectedFailure[] = [];
  const sockets = new Set<WebSocket>();
  let seq = 0;
  const sessionId = `session-${Date.now()}`;

  const server = http.createServer();
  const wss = new WebSocketServer({ noServer: true });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const emu: DiscordEmulator = {
    token,
    bot,
    applicationId,
    guildId,
    apiRoot: `${base}/api`,
    gatewayUrl: `${base.replace('http', 'ws')}/gateway`,
    messages,
    channels,
    interactions,
    commands: [],
    typing: [],
    requests: [],
    identifies: 0,
    resumes: 0,
    sockets: () => sockets.size,
    guildChannel(cid = id()) {
      const known = channels.get(cid);
      if (known) return known;
      const ch: EmuChannel = { id: cid, type: 0, guild_id: guildId, name: 'general' };
      channels.set(cid, ch);
      return ch;
    },
    dmChannel(user) {
      for (const ch of channels.values()) if (ch.type === 1 && ch.recipients?.[0]?.id === user.id) return ch;
      const ch: EmuChannel = { id: id(), type: 1, recipients: [user] };
      channels.set(ch.id, ch);
      return ch;
    },
    dm(user, text, files = []) {
      const ch = emu.dmChannel(user);
      const attachments = files.map((f) => {
        const aid = id();
        blobs.set(aid, f.data);
        return { id: aid, filename: f.name, size: f.data.length, url: `${base}/attachments/${aid}/${f.name}` };
      });
      return userMessage(user, ch, text, [], attachments);
    },
    guildMessage(user, channelId, text, mention = false) {
      const ch = channels.get(channelId) ?? emu.guildChannel(channelId);
      return userMessage(user, ch, mention ? `<@${bot.id}> ${text}` : text, mention ? [bot] : [], []);
    },
    click(user, messageId, customId) {
      const msg = messages.get(messageId);
      if (!msg) throw new Error(`no message ${messageId}`);
      return interact(user, msg.channel_id, 3, { custom_id: customId, component_type: 2 }, msg);
    },
    slash(user, channelId, command, args) {
      const options = [{ name: 'command', type: 3, value: command }];
      if (args) options.push({ name: 'args', type: 3, value: args });
      const cmd = emu.commands.find((c) => c.name === 'switchboard');
      return interact(user, channelId, 2, { id: cmd?.id ?? id(), name: 'switchboard', type: 1, options });
    },
    botMessages: (channelId) =>
      [...messages.values()].filter((m) => m.channel_id === channelId && m.author.id === bot.id && !m.deleted),
    failNext: (f) => failures.push(f),
    rateLimitNext(method, path, retryAfter) {
      failures.push({
        method,
        path,
        status: 429,
        body: { message: 'You are being rate limited.', retry_after: retryAfter, global: false },
        headers: {
          'retry-after': String(Math.ceil(retryAfter)),
          'x-ratelimit-limit': '5',
          'x-ratelimit-remaining': '0',
          'x-ratelimit-reset-after': String(retryAfter),
          'x-ratelimit-bucket': 'emulated',
          'x-ratelimit-scope': 'user',
        },
      });
    },
    dropGateway() {
      for (const ws of sockets) ws.terminate();
    },
    dispatch(t, d) {
      seq++;
      const frame = JSON.stringify({ op: 0, t, s: seq, d });
      for (const ws of sockets) ws.send(frame);
    },
    async close() {
      for (const ws of sockets) ws.terminate();
      wss.close();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };

  function userMessage(
    user: DiscordUser,
    ch: EmuChannel,
    content: string,
    mentions: DiscordUser[],
    attachments: EmuMessage['attachments'],
  ): EmuMessage {
    const guild = ch.type === 1 ? {} : { guild_id: guildId };
    const msg: EmuMessage = {
      id: id(),
      channel_id: ch.id,
      ...guild,
      author: user,
      content,
      embeds: [],
      components: [],
      attachments,
      edits: 0,
      deleted: false,
      files: {},
      mentions,
    };
    messages.set(msg.id, msg);
    emu.dispatch('MESSAGE_CREATE', { ...wire(msg), ...(ch.type === 1 ? {} : { member: { nick: null } }) });
    return msg;
  }

  function interact(
    user: DiscordUser,
    channelId: string,
    type: 2 | 3,
    data: Record<string, unknown>,
    message?: EmuMessage,
  ): EmuInteraction {
    const ch = channels.get(channelId);
    const inGuild = ch && ch.type !== 1;
    const it: EmuInteraction = { id: id(), token: `itok-${id()}`, created: Date.now(), callbacks: [], followups: [] };
    interactions.set(it.id, it);
    emu.dispatch('INTERACTION_CREATE', {
      id: it.id,
      application_id: applicationId,
      type,
      token: it.token,
      version: 1,
      data,
      channel_id: channelId,
      channel: { id: channelId, type: ch?.type ?? 1 },
      ...(inGuild ? { guild_id: guildId, member: { user, roles: [], permissions: '0' } } : { user }),
      ...(message ? { message: wire(message) } : {}),
      app_permissions: '0',
      locale: 'en-US',
      entitlements: [],
      authorizing_integration_owners: {},
      attachment_size_limit: 26214400,
    });
    return it;
  }

  function wire(m: EmuMessage): Record<string, unknown> {
    const { edits: _e, deleted: _d, files: _f, interaction_token: _t, ...rest } = m;
    return {
      ...rest,
      type: 0,
      timestamp: new Date().toISOString(),
      edited_timestamp: null,
      tts: false,
      mention_everyone: false,
      mention_roles: [],
      pinned: false,
    };
  }

  /** A message body (JSON or multipart with `payload_json` and `files[n]`). */
  async function readBody(
    req: http.IncomingMessage,
  ): Promise<{ body: Record<string, any>; files: Record<string, Buffer> }> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const raw = Buffer.concat(chunks);
    const type = req.headers['content-type'] ?? '';
    if (type.startsWith('multipart/form-data')) {
      const form = await new Response(raw, { headers: { 'content-type': type } }).formData();
      const body = JSON.parse(String(form.get('payload_json') ?? '{}')) as Record<string, any>;
      const files: Record<string, Buffer> = {};
      for (const [key, value] of form.entries()) {
        if (key.startsWith('files[') && typeof value !== 'string')
          files[(value as File).name] = Buffer.from(await (value as File).arrayBuffer());
      }
      return { body, files };
    }
    return { body: raw.length ? (JSON.parse(raw.toString('utf8')) as Record<string, any>) : {}, files: {} };
  }

  /** Discord's 50035 for a body it refuses; null when valid. */
  function invalid(body: Record<string, any>): Record<string, unknown> | null {
    if (typeof body.content === 'string' && body.content.length > CONTENT_LIMIT) {
      return {
        code: 50035,
        message: 'Invalid Form Body',
        errors: {
          content: {
            _errors: [{ code: 'BASE_TYPE_MAX_LENGTH', message: `Must be ${CONTENT_LIMIT} or fewer in length.` }],
          },
        },
      };
    }
    for (const e of body.embeds ?? []) {
      if (typeof e?.description === 'string' && e.description.length > 4096)
        return {
          code: 50035,
          message: 'Invalid Form Body',
          errors: { embeds: { _errors: [{ code: 'BASE_TYPE_MAX_LENGTH' }] } },
        };
    }
    for (const row of body.components ?? [])
      for (const c of row.components ?? [])
        if (typeof c.custom_id === 'string' && c.custom_id.length > 100)
          return {
            code: 50035,
            message: 'Invalid Form Body',
            errors: { components: { _errors: [{ code: 'BASE_TYPE_MAX_LENGTH' }] } },
          };
    return null;
  }

  function botPost(channelId: string, body: Record<string, any>, files: Record<string, Buffer>): EmuMessage {
    const attachments = Object.entries(files).map(([name, data]) => ({
      id: id(),
      filename: name,
      size: data.length,
      url: `${base}/attachments/x/${name}`,
    }));
    const msg: EmuMessage = {
      id: id(),
      channel_id: channelId,
      ...(channels.get(channelId)?.guild_id ? { guild_id: guildId } : {}),
      author: bot,
      content: body.content ?? '',
      embeds: body.embeds ?? [],
      components: body.components ?? [],
      attachments,
      ...(body.flags ? { flags: body.flags } : {}),
      edits: 0,
      deleted: false,
      files,
      mentions: [],
    };
    if (!msg.content && !msg.embeds.length && !attachments.length && !msg.components.length)
      throw Object.assign(new Error('empty'), { discord: { code: 50006, message: 'Cannot send an empty message' } });
    messages.set(msg.id, msg);
    return msg;
  }

  function edit(msg: EmuMessage, body: Record<string, any>): void {
    if (body.content !== undefined) msg.content = body.content ?? '';
    if (body.embeds !== undefined) msg.embeds = body.embeds ?? [];
    if (body.components !== undefined) msg.components = body.components ?? [];
    msg.edits++;
  }

  async function route(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', base);
    const method = req.method ?? 'GET';
    const att = /^\/attachments\/(\d+)\//.exec(url.pathname);
    if (method === 'GET' && att) {
      const blob = blobs.get(att[1] as string);
      if (!blob) return json(res, 404, unknown('Attachment', 10000));
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': blob.length }).end(blob);
      return;
    }
    const p = decodeURIComponent(url.pathname).replace(/^\/api\/v10/, '');
    emu.requests.push(`${method} ${p}`);
    const fail = failures.findIndex((f) => f.method === method && f.path.test(p));
    if (fail >= 0) {
      const f = failures.splice(fail, 1)[0] as InjectedFailure;
      return json(res, f.status, f.body, f.headers);
    }
    const interaction = /^\/interactions\/(\d+)\/([^/]+)\/callback$/.exec(p);
    const webhook = /^\/webhooks\/(\d+)\/([^/]+)(?:\/messages\/(@original|\d+))?$/.exec(p);
    // Interaction tokens authenticate their own routes; everything else needs the bot token.
    if (!interaction && !webhook && req.headers.authorization !== `Bot ${token}`)
      return json(res, 401, { message: '401: Unauthorized', code: 0 });
    const { body, files } = method === 'GET' || method === 'DELETE' ? { body: {}, files: {} } : await readBody(req);
    if (method === 'GET' && p === '/gateway/bot')
      return json(res, 200, {
        url: emu.gatewayUrl,
        shards: 1,
        session_start_limit: { total: 1000, remaining: 999, reset_after: 86_400_000, max_concurrency: 1 },
      });
    if (method === 'GET' && p === '/users/@me') return json(res, 200, bot);
    if (method === 'PUT' && p === `/applications/${applicationId}/commands`) {
      emu.commands = (body as unknown as Array<Record<string, unknown>>).map((c) => ({
        id: id(),
        application_id: applicationId,
        version: '1',
        ...c,
      }));
      return json(res, 200, emu.commands);
    }
    if (method === 'POST' && p === '/users/@me/channels') {
      const user = { id: String(body.recipient_id), username: `user${body.recipient_id}` };
      return json(res, 200, emu.dmChannel(user));
    }
    if (interaction) {
      const it = interactions.get(interaction[1] as string);
      if (!it || it.token !== interaction[2] || Date.now() - it.created > 3000)
        return json(res, 404, unknown('interaction', 10062));
      if (it.callbacks.length)
        return json(res, 400, { message: 'Interaction has already been acknowledged.', code: 40060 });
      const bad = invalid(body.data ?? {});
      if (bad) return json(res, 400, bad);
      it.callbacks.push(body as { type: number; data?: Record<string, unknown> });
      return json(res, 204, null);
    }
    if (webhook) {
      const it = [...interactions.values()].find((i) => i.token === webhook[2]);
      if (!it?.callbacks.length) return json(res, 404, unknown('Webhook', 10015));
      const bad = invalid(body);
      if (bad) return json(res, 400, bad);
      if (method === 'POST' && !webhook[3]) {
        const msg = botPost('followup', body, files);
        msg.interaction_token = it.token;
        it.followups.push(msg);
        return json(res, 200, wire(msg));
      }
      if (method === 'PATCH') {
        // A deferred answer's first edit is its message (with the deferral's flags: ephemeral), whose buttons can be clicked.
        const own = webhook[3] === '@original' && it.callbacks[0]?.type === 5;
        if (own && it.original) edit(it.original, body);
        else if (own && (body.content || body.components?.length))
          it.original = botPost('followup', { ...body, flags: it.callbacks[0]?.data?.flags }, files);
        return json(res, 200, it.original ? wire(it.original) : { id: '0', content: body.content ?? '' });
      }
    }
    const thread = /^\/channels\/(\d+)\/messages\/(\d+)\/threads$/.exec(p);
    if (method === 'POST' && thread) {
      const parent = channels.get(thread[1] as string);
      const from = messages.get(thread[2] as string);
      if (!parent || !from) return json(res, 404, unknown('Message', 10008));
      if (channels.has(from.id))
        return json(res, 400, { message: 'A thread has already been created for this message', code: 160004 });
      // Discord gives a thread started from a message the message's id.
      const ch: EmuChannel = {
        id: from.id,
        type: 11,
        guild_id: guildId,
        parent_id: parent.id,
        name: String(body.name ?? ''),
      };
      channels.set(ch.id, ch);
      return json(res, 201, ch);
    }
    const typing = /^\/channels\/(\d+)\/typing$/.exec(p);
    if (method === 'POST' && typing) {
      emu.typing.push(typing[1] as string);
      return json(res, 204, null);
    }
    const post = /^\/channels\/(\d+)\/messages$/.exec(p);
    if (post && method === 'POST') {
      if (!channels.has(post[1] as string)) return json(res, 404, unknown('Channel', 10003));
      const bad = invalid(body);
      if (bad) return json(res, 400, bad);
      try {
        return json(res, 200, wire(botPost(post[1] as string, body, files)));
      } catch (err) {
        return json(res, 400, (err as { discord: unknown }).discord);
      }
    }
    const one = /^\/channels\/(\d+)\/messages\/(\d+)$/.exec(p);
    if (one) {
      const msg = messages.get(one[2] as string);
      if (!msg || msg.deleted || msg.channel_id !== one[1]) return json(res, 404, unknown('Message', 10008));
      if (method === 'GET') return json(res, 200, wire(msg));
      if (msg.author.id !== bot.id && method === 'PATCH')
        return json(res, 403, { message: 'Cannot edit a message authored by another user', code: 50005 });
      if (method === 'PATCH') {
        const bad = invalid(body);
        if (bad) return json(res, 400, bad);
        edit(msg, body);
        return json(res, 200, wire(msg));
      }
      if (method === 'DELETE') {
        msg.deleted = true;
        return json(res, 204, null);
      }
    }
    json(res, 404, { message: '404: Not Found', code: 0 });
  }

  server.on('request', (req, res) => {
    route(req, res).catch((err: unknown) => json(res, 500, { message: String(err), code: 0 }));
  });
  server.on('upgrade', (req, socket, head) => {
    if (!req.url?.startsWith('/gateway')) return socket.destroy();
    wss.handleUpgrade(req, socket, head, (ws) => gateway(ws));
  });

  function gateway(ws: WebSocket): void {
    ws.send(JSON.stringify({ op: 10, d: { heartbeat_interval: 41_250 } }));
    ws.on('message', (raw) => {
      const frame = JSON.parse(String(raw)) as { op: number; d: any };
      if (frame.op === 1) return ws.send(JSON.stringify({ op: 11 }));
      if (frame.op === 2) {
        emu.identifies++;
        if (frame.d?.token !== token && frame.d?.token !== `Bot ${token}`)
          return ws.close(4004, 'Authentication failed.');
        sockets.add(ws);
        seq++;
        ws.send(
          JSON.stringify({
            op: 0,
            t: 'READY',
            s: seq,
            d: {
              v: 10,
              user: bot,
              guilds: [{ id: guildId, unavailable: true }],
              session_id: sessionId,
              resume_gateway_url: emu.gatewayUrl,
              shard: [0, 1],
              application: { id: applicationId, flags: 0 },
            },
          }),
        );
        return;
      }
      if (frame.op === 6) {
        emu.resumes++;
        if (frame.d?.session_id !== sessionId) return ws.send(JSON.stringify({ op: 9, d: false }));
        sockets.add(ws);
        seq++;
        ws.send(JSON.stringify({ op: 0, t: 'RESUMED', s: seq, d: {} }));
      }
    });
    ws.on('close', () => sockets.delete(ws));
  }

  return emu;
}
