/**
 * Who may talk to the bot: allowlisted users, admins and paired users. Anyone else gets a
 * pairing code (6 characters, 1 hour) and no model call. A per-user rate limit answers floods
 * with one notice per window, not one per message.
 */
import { randomInt } from 'node:crypto';
import type { Config } from '../config.js';
import type { Db } from '../store/db.js';
import { activeCodeFor, approveCode, insertCode, isPaired } from '../store/repos/pairing.js';

/** The pairing alphabet: no 0/O, 1/I/L to avoid misreading. */
export const PAIRING_ALPHABET = 'ABCDEFGHJKMNPQRSTUVWXYZ23456789';

/**
 * What access decisions read of a channel's declaration (`ChannelKind` in `kit/kind.ts`
 * extends it). The kinds are passed in (`CoreOptions.channelKinds`, from `channels/registry.ts`):
 * the core sits below the channels and names none of them.
 */
export interface AccessKind {
  /** The channel's name in conversation rows and principals (`NAME:USER`). */
  readonly name: string;
  /** The local operator's terminal: always allowed, no flood limit, sees and revokes every rule. */
  readonly local?: boolean;
  /** Users exist only because the operator made them (login links): let in without pairing. */
  readonly signedIn?: boolean;
  /**
   * Whether a user of this channel holds admin powers now, besides `access.admins` (a signed-in
   * channel's own grant, e.g. an `--admin` login link). Read from the database at every decision,
   * so a revocation holds at once on every instance.
   */
  isAdmin?(db: Db, userId: string): Promise<boolean>;
  /** Platform user ids (without the channel prefix) the channel's own config section allows. */
  allowedUsers?(config: Config): readonly string[];
}

/** Make a fresh 6-character pairing code. */
export function generatePairingCode(): string {
  let code = '';
  for (let i = 0; i < 6; i++) code += PAIRING_ALPHABET[randomInt(PAIRING_ALPHABET.length)];
  return code;
}

/**
 * Access decisions and pairing. Admin power is read for each decision, never remembered: a web
 * user revoked a moment ago (`switchboard web revoke`) has lost it on every instance.
 */
export class AccessControl {
  private readonly windows = new Map<string, { start: number; count: number; notified: boolean }>();

  constructor(
    private readonly db: Db,
    private readonly config: Config,
    /** Every registered channel kind (`channels/registry.ts`). */
    private readonly kinds: readonly AccessKind[],
  ) {}

  private kind(channel: string): AccessKind | undefined {
    return this.kinds.find((k) => k.name === channel);
  }

  /**
   * Whether a channel is the local operator's terminal (`chat`, `chat --jsonl`): always allowed,
   * never rate limited (its kind says so).
   */
  isLocal(channel: string): boolean {
    return this.kind(channel)?.local === true;
  }

  /**
   * True for `channel:userId` principals listed in `access.admins`, and for users of a signed-in
   * channel its store says are admins now (the web chat: a live session made from an `--admin`
   * link), read from the database at each call.
   */
  async isAdmin(principal: string): Promise<boolean> {
    if (this.config.access.admins.includes(principal)) return true;
    const at = principal.indexOf(':');
    if (at <= 0) return false;
    const kind = this.kind(principal.slice(0, at));
    return (await kind?.isAdmin?.(this.db, principal.slice(at + 1))) === true;
  }

  /** Allowlisted, admin, paired, or a local channel. */
  async isAllowed(channel: string, userId: string): Promise<boolean> {
    // Signed-in channels' users exist only because the operator made them (login links).
    if (this.isLocal(channel) || this.kind(channel)?.signedIn) return true;
    const principal = `${channel}:${userId}`;
    if (this.config.access.admins.includes(principal) || this.config.access.allowed_users.includes(principal))
      return true;
    if (this.kind(channel)?.allowedUsers?.(this.config).includes(userId)) return true;
    return isPaired(this.db, channel, userId);
  }

  /** The user's live pairing code, or a new one. */
  async requestPairing(
    channel: string,
    userId: string,
    displayName: string,
    chatKey: string,
  ): Promise<{ code: string; expiresAt: number; isNew: boolean }> {
    const now = Date.now();
    const existing = await activeCodeFor(this.db, channel, userId, now);
    if (existing) return { code: existing.code, expiresAt: existing.expires_at, isNew: false };
    const expiresAt = now + this.config.access.pairing_code_ttl_minutes * 60_000;
    for (let attempt = 0; attempt < 10; attempt++) {
      const code = generatePairingCode();
      const inserted = await insertCode(this.db, {
        code,
        channel,
        user_id: userId,
        display_name: displayName.replace(/\s+/g, ' ').slice(0, 64) || userId,
        chat_key: chatKey,
        status: 'pending',
        created_at: now,
        expires_at: expiresAt,
      });
      if (inserted) return { code, expiresAt, isNew: true };
    }
    throw new Error('could not allocate a unique pairing code');
  }

  /** Approve a code (case-insensitive). */
  async approvePairing(
    code: string,
    by: string,
  ): Promise<{ ok: true; channel: string; userId: string } | { ok: false; reason: string }> {
    const normalised = code.trim().toUpperCase();
    if (!/^[A-Z0-9]{6}$/.test(normalised))
      return { ok: false, reason: `"${code}" is not a pairing code (6 letters/digits)` };
    const row = await approveCode(this.db, normalised, by, Date.now());
    if (!row) return { ok: false, reason: `no pending pairing code ${normalised} (unknown, expired or already used)` };
    return { ok: true, channel: row.channel, userId: row.user_id };
  }

  /**
   * Count a message against the user's per-minute budget.
   * @returns `ok`, or `limited` with `notify` true only for the first refusal in the window and
   *   how long until messages are taken again.
   */
  rateLimit(principal: string, now = Date.now()): { ok: true } | { ok: false; notify: boolean; retryAfterMs: number } {
    const limit = this.config.access.rate_limit_per_minute;
    let w = this.windows.get(principal);
    if (!w || now - w.start >= 60_000) {
      w = { start: now, count: 0, notified: false };
      this.windows.set(principal, w);
    }
    w.count++;
    if (w.count <= limit) return { ok: true };
    const notify = !w.notified;
    w.notified = true;
    return { ok: false, notify, retryAfterMs: w.start + 60_000 - now };
  }
}
