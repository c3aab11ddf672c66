/**
 * The web chat as a {@link Channel}: pages and an API on the shared HTTP server, a presenter
 * {@link WebSurface} for everything the core shows, login links and sessions in the database.
 * Users are `web:<name>`; one is an admin while a session made from an `--admin` link lives (read
 * from the database at each decision, so `switchboard web revoke` ends the power at once).
 */
import type { Logger } from 'pino';
import { CoreHolder } from '../../kit/index.js';
import type {
  Config,
  ChannelCore,
  Channel,
  ChannelCapability,
  LinkSignIn,
  CoreEvent,
  HttpServer,
  Db,
  PathPolicy,
} from '../../kit/index.js';
import { adminAction, adminState } from './admin-routes.js';
import { baseUrl, createLoginLink, redeemLogin, sessionCookie } from './auth.js';
import { act, type ChatDeps, download, principal, refOf, send, stream, upload } from './chat-routes.js';
import { remove, rename, toolOutput } from './conversations.js';
import { asset, field, guard, json, page, readJson, tooManyLogins } from './http.js';
import { LoginLimiter } from './login-limit.js';
import { openRelay, type WebRelay } from './relay.js';
import { WebSurface } from './surface.js';

export { baseUrl, createLoginLink } from './auth.js';

/** Options of {@link WebChannel}. */
export interface WebChannelOptions {
  config: Config;
  http: HttpServer;
  db: Db;
  log: Logger;
  paths: PathPolicy;
  /** Every core event (turn start and end drive the page's Stop button). */
  subscribe(listener: (conversationId: string, event: CoreEvent) => void): () => void;
  /** The model is the built-in scripted demo (`start --demo`): the page says so in its header. */
  demo?: boolean;
}

/** The web chat and operator console. */
export class WebChannel implements Channel, LinkSignIn {
  readonly name = 'web';
  readonly capabilities: ReadonlySet<ChannelCapability> = new Set<ChannelCapability>(['attachments']);
  readonly surface: WebSurface;
  private readonly held = new CoreHolder('web');
  private unsubscribe: () => void = () => {};
  /** Hints to and from the other instances over the same PostgreSQL database. */
  private relay: WebRelay | null = null;
  private problem: string | null = 'not started';
  /** Failed logins per client address (guesses are slowed). */
  private readonly logins = new LoginLimiter();

  constructor(private readonly options: WebChannelOptions) {
    this.surface = new WebSurface(options.db, options.config.web.stream_interval_ms);
    this.routes();
  }

  private get core(): ChannelCore {
    return this.held.get();
  }

  /** Register the pages and the API on the HTTP server. */
  private routes(): void {
    const { http, db, config, paths } = this.options;
    const deps: ChatDeps = {
      core: () => this.core,
      surface: this.surface,
      paths,
      maxUploadBytes: config.web.max_upload_bytes,
      db,
    };
    const api = (handler: Parameters<typeof guard>[2], methods = ['POST'], admin = false) =>
      guard(db, 'api', handler, { methods, admin });
    http.route(
      '/',
      guard(db, 'page', (_req, res) => page(res, 200, 'chat')),
    );
    http.route(
      '/admin',
      guard(db, 'page', (_req, res) => page(res, 200, 'admin'), { admin: true }),
    );
    http.route('/assets/app.js', asset('app.js'));
    http.route('/assets/app.css', asset('app.css'));
    http.route('/favicon.ico', (_req, res) => void res.writeHead(204).end());
    http.route('/login', async (req, res) => {
      const address = req.socket.remoteAddress ?? '';
      const waitMs = this.logins.waitMs(address);
      if (waitMs > 0) return tooManyLogins(res, waitMs);
      // Counted as failed before the look-up, so a burst of guesses cannot all pass the check at once.
      this.logins.failed(address);
      const token = new URL(req.url ?? '/', 'http://localhost').searchParams.get('token') ?? '';
      const r = token ? await redeemLogin(db, token, config.web.session_days) : undefined;
      if (!r) return page(res, 403, 'used');
      this.logins.succeeded(address);
      this.options.log.info(
        { user: r.session.user_name, session: r.session.id, admin: !!r.session.admin },
        'web: signed in',
      );
      res
        .writeHead(303, {
          location: '/',
          'set-cookie': sessionCookie(req, r.cookieToken, config.web.session_days * 86_400),
          'cache-control': 'no-store',
        })
        .end();
    });
    http.route(
      '/api/session',
      api(
        (_req, res, s) =>
          json(res, 200, { user: s.user_name, admin: !!s.admin, csrf: s.csrf, demo: this.options.demo === true }),
        ['GET'],
      ),
    );
    http.route(
      '/api/stream',
      api((req, res, s) => stream(deps, req, res, s), ['GET']),
    );
    http.route(
      '/api/send',
      api((req, res, s) => send(deps, req, res, s)),
    );
    http.route(
      '/api/upload',
      api((req, res, s, url) => upload(deps, req, res, s, url)),
    );
    http.route(
      '/api/file',
      api((_req, res, s, url) => download(deps, res, s, url), ['GET']),
    );
    http.route(
      '/api/conversation/rename',
      api((req, res, s) => rename(deps, req, res, s)),
    );
    http.route(
      '/api/conversation/delete',
      api((req, res, s) => remove(deps, req, res, s)),
    );
    http.route(
      '/api/tool-output',
      api((_req, res, s, url) => toolOutput(deps, res, s, url), ['GET']),
    );
    http.route(
      '/api/action',
      api(async (req, res, s) => {
        const out = await act(this.core, await readJson(req), principal(s));
        json(res, out.ok ? 200 : 409, out);
      }),
    );
    http.route(
      '/api/stop',
      api(async (req, res, s) => {
        json(res, 200, {
          stopped: await this.core.chats.stop(refOf(s, field(await readJson(req), 'thread', true)), principal(s)),
        });
      }),
    );
    http.route(
      '/api/status',
      api(
        async (_req, res, s, url) => {
          const status = await this.core.chats.status(refOf(s, url.searchParams.get('thread') ?? ''));
          json(res, 200, { running: status.turn !== 'idle', model: status.model });
        },
        ['GET'],
      ),
    );
    http.route(
      '/api/admin/state',
      api((_req, res, s) => adminState(db, this.core, res, s), ['GET'], true),
    );
    http.route(
      '/api/admin/action',
      api((req, res, s) => adminAction(this.core, req, res, s), ['POST'], true),
    );
  }

  async start(core: ChannelCore): Promise<void> {
    this.held.set(core);
    const { db, config, log } = this.options;
    this.relay = await openRelay(db, config.store.database_url, log, (notice) => this.surface.received(notice));
    this.surface.relayTo(this.relay ? (notice) => this.relay?.send(notice) : null);
    // The Stop button: a turn of a web conversation started or ended.
    this.unsubscribe = this.options.subscribe((conversationId, event) => {
      if (event.type !== 'turn_started' && event.type !== 'turn_done') return;
      void core.chats
        .get(conversationId)
        .then((conv) => {
          if (conv?.channel === 'web' && !conv.parent_id)
            this.surface.signal(conv.chat_key, { thread: conv.thread_key, running: event.type === 'turn_started' });
        })
        .catch(() => undefined);
    });
    this.problem = null;
  }

  async stop(): Promise<void> {
    this.unsubscribe();
    this.surface.relayTo(null);
    await this.relay?.close();
    this.relay = null;
    this.problem = 'web: stopped';
  }

  /** End every open event stream (shutdown: the pages reconnect to the next start). */
  beforeHttpClose(): void {
    this.surface.bus.emit('end');
  }

  health(): string | null {
    return this.problem;
  }

  /** A one-time login link for the HTTP server bound at `port`. */
  loginLink(
    port: number,
    user: string,
    admin: boolean,
    ttlMinutes = this.options.config.web.link_ttl_minutes,
  ): Promise<{ url: string; expiresAt: number }> {
    return createLoginLink(this.options.db, baseUrl(this.options.config, port), { user, admin, ttlMinutes });
  }
}
