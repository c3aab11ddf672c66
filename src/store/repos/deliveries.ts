/**
 * The delivery ledger's queries. A row is written in the same transaction as the state it shows
 * (callers pass their transaction as `db`); the presenter claims it, syncs the platform messages
 * to its content and marks it delivered with their references.
 */
import { sql } from 'kysely';
import type { Db } from '../db.js';
import { literalList } from '../literal-list.js';
import { prepared, preparedWrite } from '../prepared.js';
import type { Delivery, DeliveryKind, DeliveryStatus, TurnStatus } from '../schema.js';

/** Statuses that still need work from a presenter. */
export const OPEN_STATUSES: DeliveryStatus[] = ['pending', 'sending'];
/** {@link OPEN_STATUSES} as literals, for queries (see literal-list.ts). */
const OPEN = literalList(OPEN_STATUSES);

/** What a new row needs; `content` is JSON. */
export interface NewDelivery {
  conversationId: string;
  kind: DeliveryKind;
  key: string;
  content: string;
  turnId?: string | null;
  /** A card whose content offers buttons: the approval's or question's id (see `open_card`). */
  openCard?: string | null /** Platform messages the row starts with (JSON, as `refs`); none by default. */;
  refs?: string;
}

/** Status stays final for failed and abandoned rows; anything else goes back to `pending`. */
// Columns qualified: inside PostgreSQL's upsert a bare name is ambiguous (`excluded` is in scope too).
const reopen = sql<DeliveryStatus>`CASE WHEN deliveries.status IN ('failed', 'abandoned') THEN deliveries.status ELSE 'pending' END`;

/**
 * {@link reopen} for new content written while a row may be half sent: a `sending` row stays
 * `sending`, so whoever sends it next still knows a post may have landed (and looks before posting
 * again) instead of taking the row for one never sent — a second copy of the message.
 */
const requeue = sql<DeliveryStatus>`CASE WHEN deliveries.status IN ('failed', 'abandoned', 'sending') THEN deliveries.status ELSE 'pending' END`;

/** The columns of a new row for `d` with `status`, written at `now`. */
function newRow(d: NewDelivery, status: DeliveryStatus, now: number) {
  return {
    open_card: d.openCard ?? null,
    conversation_id: d.conversationId,
    kind: d.kind,
    idem_key: d.key,
    content: d.content,
    status,
    turn_id: d.turnId ?? null,
    last_error: null,
    created_at: now,
    updated_at: now,
    delivered_at: null,
    ...(d.refs === undefined ? {} : { refs: d.refs }),
  };
}

/**
 * Insert a row unless its key exists (idempotent: a retried write shows nothing twice).
 * @returns true when a row was inserted.
 */
export async function insertDelivery(db: Db, d: NewDelivery): Promise<boolean> {
  const now = Date.now();
  const r = await db
    .insertInto('deliveries')
    .values(newRow(d, 'pending', now))
    .onConflict((oc) => oc.column('idem_key').doNothing())
    .executeTakeFirst();
  return Number(r.numInsertedOrUpdatedRows ?? 0) > 0;
}

/**
 * Insert a row, or give an existing one new content and queue it again (a card after a decision,
 * a tool line once finished, a streamed reply once stored). Failed and abandoned rows stay so.
 */
export async function upsertDelivery(db: Db, d: NewDelivery): Promise<void> {
  await upsertQuery(
    db,
    d.conversationId,
    d.kind,
    d.key,
    d.content,
    d.turnId ?? null,
    Date.now(),
    'pending',
    null,
    d.openCard ?? null,
  );
}

/**
 * {@link upsertDelivery} for a chat whose channel has no surface (the terminal channels print
 * events as they happen): a new row is written as delivered at once, so no presenter has to
 * settle it after. An existing row is queued again as by {@link upsertDelivery}.
 */
export async function upsertShownDelivery(db: Db, d: NewDelivery): Promise<void> {
  const now = Date.now();
  await upsertQuery(
    db,
    d.conversationId,
    d.kind,
    d.key,
    d.content,
    d.turnId ?? null,
    now,
    'delivered',
    now,
    d.openCard ?? null,
  );
}

const upsertQuery = preparedWrite(
  (
    db: Db,
    conversationId: string,
    kind: DeliveryKind,
    key: string,
    content: string,
    turnId: string | null,
    now: number,
    status: DeliveryStatus,
    deliveredAt: number | null,
    openCard: string | null,
  ) =>
    db
      .insertInto('deliveries')
      .values({
        ...newRow({ conversationId, kind, key, content, turnId, openCard }, status, now),
        delivered_at: deliveredAt,
      })
      .onConflict((oc) =>
        oc.column('idem_key').doUpdateSet({
          content,
          open_card: openCard,
          status: requeue,
          // Qualified: PostgreSQL's upsert also sees `excluded`, so a bare name is ambiguous there.
          version: sql<number>`deliveries.version + 1`,
          next_attempt_at: 0,
          updated_at: now,
        }),
      ),
);

/** Give an existing row new content (no-op when the key is unknown). */
export async function updateDeliveryContent(db: Db, key: string, content: string): Promise<boolean> {
  const r = await db
    .updateTable('deliveries')
    .set({ content, status: requeue, version: sql<number>`version + 1`, next_attempt_at: 0, updated_at: Date.now() })
    .where('idem_key', '=', key)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) > 0;
}

/**
 * A card's row and the rows of its copies: `key` itself and every `key:<where>` (the copy in a
 * job's reporting chat, the copies a tap showed the ledger), in the order they were written.
 */
export async function cardRows(db: Db, key: string): Promise<Delivery[]> {
  // `;` follows `:` in every collation of ASCII: the range is exactly the keys `key:…`.
  return db
    .selectFrom('deliveries')
    .selectAll()
    .where((eb) =>
      eb.or([eb('idem_key', '=', key), eb.and([eb('idem_key', '>', `${key}:`), eb('idem_key', '<', `${key};`)])]),
    )
    .orderBy('id')
    .execute();
}

/**
 * Give a card row (by id) new content and whether it offers buttons, and queue it again. A row
 * abandoned after a long run of transient failures is queued again too: a card left with buttons
 * for something decided is worse than one more attempt; a row the platform refused for good stays.
 */
export async function rewriteCard(db: Db, id: number, content: string, openCard: string | null): Promise<void> {
  await db
    .updateTable('deliveries')
    .set({
      content,
      open_card: openCard,
      status: sql<DeliveryStatus>`CASE WHEN status IN ('failed', 'sending') THEN status ELSE 'pending' END`,
      version: sql<number>`version + 1`,
      next_attempt_at: 0,
      updated_at: Date.now(),
    })
    .where('id', '=', id)
    .execute();
}

/** Card rows whose content offers buttons (for any approval or question). */
export async function openCardRows(db: Db): Promise<Delivery[]> {
  return db.selectFrom('deliveries').selectAll().where('open_card', 'is not', null).execute();
}

/** Card rows given up after transient failures: their message may still show what they replaced. */
export async function abandonedCardRows(db: Db): Promise<Delivery[]> {
  return db.selectFrom('deliveries').selectAll().where('status', '=', 'abandoned').where('kind', '=', 'card').execute();
}

/** A live stream's claim on its row: the row's id, its references so far and the fencing token. */
export interface StreamClaim extends DeliveryClaim {
  refs: string;
}

/**
 * Claim a reply's row for streaming it live, creating it as `streaming` on the first chunk. The
 * stream is claimed like any row being sent: taken only while it still streams and is unclaimed,
 * already this holder's (same token: its saves stay valid), expired, or held by `takeFrom` (a
 * holder known to be gone). Null when another instance streams it or its final text is stored.
 */
export async function claimStream(
  db: Db,
  d: NewDelivery,
  holder: string,
  ttlMs: number,
  takeFrom: string | null,
  now = Date.now(),
): Promise<StreamClaim | null> {
  const [row] = (
    await claimStreamQuery(
      db,
      d.conversationId,
      d.kind,
      d.key,
      d.content,
      d.turnId ?? null,
      d.openCard ?? null,
      holder,
      now + ttlMs,
      now,
      takeFrom,
    )
  ).rows;
  return row ? { id: Number(row.id), holder, token: Number(row.claim_token), refs: row.refs } : null;
}

// Prepared, as every query of a streamed edit: one claim per update of a live reply.
const claimStreamQuery = preparedWrite(
  (
    db: Db,
    conversationId: string,
    kind: DeliveryKind,
    key: string,
    content: string,
    turnId: string | null,
    openCard: string | null,
    holder: string,
    expiresAt: number,
    now: number,
    // A holder known to be gone, or null (`claimed_by = NULL` matches no row: nobody is taken from).
    takeFrom: string | null,
  ) =>
    db
      .insertInto('deliveries')
      .values({
        ...newRow({ conversationId, kind, key, content, turnId, openCard }, 'streaming', now),
        refs: '[]',
        claimed_by: holder,
        claim_token: 1,
        claim_expires_at: expiresAt,
      })
      .onConflict((oc) =>
        oc
          .column('idem_key')
          .doUpdateSet({
            claimed_by: holder,
            claim_expires_at: expiresAt,
            claim_token: sql<number>`CASE WHEN deliveries.claimed_by = ${holder} THEN deliveries.claim_token ELSE deliveries.claim_token + 1 END`,
          })
          .where((eb) =>
            eb.and([
              eb('deliveries.status', '=', 'streaming'),
              eb.or([
                eb('deliveries.claimed_by', 'is', null),
                eb('deliveries.claimed_by', '=', holder),
                eb('deliveries.claim_expires_at', '<=', now),
                eb('deliveries.claimed_by', '=', takeFrom),
              ]),
            ]),
          ),
      )
      .returning(['id', 'refs', 'claim_token']),
);

/**
 * Save a live stream's references and partial text after a post or edit, while its claim holds
 * (the text only while the row still streams: a stored final text is never overwritten).
 * False when the claim was taken: the stream must stop posting.
 */
export async function saveStream(
  db: Db,
  claim: DeliveryClaim,
  refs: string,
  content: string,
  ttlMs: number,
  now = Date.now(),
): Promise<boolean> {
  const r = await saveStreamQuery(db, claim.id, claim.holder, claim.token, refs, content, now + ttlMs, now);
  return Number(r.numAffectedRows ?? 0n) > 0;
}

const saveStreamQuery = preparedWrite(
  (db: Db, id: number, holder: string, token: number, refs: string, content: string, expiresAt: number, now: number) =>
    db
      .updateTable('deliveries')
      .set({
        refs,
        content: sql<string>`CASE WHEN status = 'streaming' THEN ${content} ELSE content END`,
        claim_expires_at: expiresAt,
        updated_at: now,
      })
      .where('id', '=', id)
      .where('claimed_by', '=', holder)
      .where('claim_token', '=', token),
);

/** Finish every stream of a conversation with `content(partial)`; returns the keys closed. */
export async function streamingRows(db: Db, conversationId: string): Promise<Delivery[]> {
  return streamingQuery(db, conversationId);
}

const streamingQuery = prepared((db: Db, conversationId: string) =>
  db
    .selectFrom('deliveries')
    .selectAll()
    .where('conversation_id', '=', conversationId)
    .where('status', '=', 'streaming'),
);

/** Close a stream with its final content (only while it is still streaming). */
export async function closeStream(db: Db, id: number, content: string): Promise<void> {
  await db
    .updateTable('deliveries')
    .set({ content, status: 'pending', version: sql<number>`version + 1`, updated_at: Date.now() })
    .where('id', '=', id)
    .where('status', '=', 'streaming')
    .execute();
}

/** Streams whose turn is over (or gone): left behind by a crash; they need closing. */
export async function orphanStreams(db: Db): Promise<Delivery[]> {
  return db
    .selectFrom('deliveries')
    .selectAll()
    .where('status', '=', 'streaming')
    .where((eb) =>
      eb.or([
        eb('turn_id', 'is', null),
        eb.not(
          eb.exists(
            eb
              .selectFrom('turns')
              .select('turns.id')
              .whereRef('turns.id', '=', 'deliveries.turn_id')
              .where('turns.status', 'in', literalList<TurnStatus>(['running', 'waiting'])),
          ),
        ),
      ]),
    )
    .execute();
}

/** A row by its key. */
export async function deliveryByKey(db: Db, key: string): Promise<Delivery | undefined> {
  return (await byKeyQuery(db, key))[0];
}

// Prepared: a live reply reads its row before each update.
const byKeyQuery = prepared((db: Db, key: string) =>
  db.selectFrom('deliveries').selectAll().where('idem_key', '=', key),
);

/** A row by id. */
export async function getDelivery(db: Db, id: number): Promise<Delivery | undefined> {
  return (await deliveryQuery(db, id))[0];
}

const deliveryQuery = prepared((db: Db, id: number) => db.selectFrom('deliveries').selectAll().where('id', '=', id));

/**
 * The platform references of the newest row of a conversation before row `beforeId` that has
 * any (JSON, as stored): the lower bound when a post a crash or a lost answer left ambiguous is
 * looked up on the platform, so an older message with the same text is never taken for it.
 */
export async function newestRefsBefore(db: Db, conversationId: string, beforeId: number): Promise<string | undefined> {
  const row = await db
    .selectFrom('deliveries')
    .select('refs')
    .where('conversation_id', '=', conversationId)
    .where('id', '<', beforeId)
    .where('refs', '!=', '[]')
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst();
  return row?.refs;
}

/** Rows of a conversation that need work, oldest first. */
export async function openDeliveries(db: Db, conversationId: string): Promise<Delivery[]> {
  return openQuery(db, conversationId);
}

const openQuery = prepared((db: Db, conversationId: string) =>
  db
    .selectFrom('deliveries')
    .selectAll()
    .where('conversation_id', '=', conversationId)
    .where('status', 'in', OPEN)
    .orderBy('id'),
);

/** Conversations with rows that need work now (due retries included). */
export async function conversationsWithOpenDeliveries(db: Db, now: number): Promise<string[]> {
  const rows = await db
    .selectFrom('deliveries')
    .select('conversation_id')
    .distinct()
    .where('status', 'in', OPEN)
    .where('next_attempt_at', '<=', now)
    .execute();
  return rows.map((r) => r.conversation_id);
}

/** A row this instance is sending: outcomes are recorded only while `token` is the row's. */
export interface DeliveryClaim {
  id: number;
  holder: string;
  token: number;
}

/** Clears a row's claim (its outcome is recorded; anyone may work on it next). */
const unclaimed = { claimed_by: null, claim_expires_at: 0 } as const;

/**
 * Claim a row for sending by compare-and-swap on the row as `seen`: it is taken only when its
 * status, references, claim token and claim expiry are still what the caller read, so the caller
 * works from the platform messages the row really has and two instances never both take a row.
 * The expiry is compared too: a holder that renewed its claim after the caller saw it run out is
 * still sending (renewing keeps the token), and taking the row from it would post twice.
 * (Content that changed meanwhile is caught by `markDelivered`'s version check: the row goes round
 * again.) The caller decides from `seen` whether the row is free (unclaimed, expired, or its
 * holder gone).
 * @returns the claim, or null when the row changed or another instance took it meanwhile.
 */
export async function claimDelivery(
  db: Db,
  seen: Delivery,
  holder: string,
  ttlMs: number,
  now = Date.now(),
): Promise<DeliveryClaim | null> {
  const token = Number(seen.claim_token) + 1;
  const r = await claimQuery(
    db,
    seen.id,
    seen.status,
    seen.refs,
    seen.claim_token,
    seen.claim_expires_at,
    holder,
    token,
    now + ttlMs,
    now,
  );
  return Number(r.numAffectedRows ?? 0n) > 0 ? { id: seen.id, holder, token } : null;
}

const claimQuery = preparedWrite(
  (
    db: Db,
    id: number,
    status: DeliveryStatus,
    refs: string,
    seenToken: number,
    seenExpiresAt: number,
    holder: string,
    token: number,
    expiresAt: number,
    now: number,
  ) =>
    db
      .updateTable('deliveries')
      .set({
        status: 'sending',
        attempts: sql<number>`attempts + 1`,
        claimed_by: holder,
        claim_token: token,
        claim_expires_at: expiresAt,
        updated_at: now,
      })
      .where('id', '=', id)
      .where('status', '=', status)
      .where('status', 'in', OPEN)
      .where('refs', '=', refs)
      .where('claim_token', '=', seenToken)
      .where('claim_expires_at', '=', seenExpiresAt),
);

/** Extend a claim while the row is still being sent; false when it was lost to another instance. */
export async function renewDeliveryClaim(
  db: Db,
  claim: DeliveryClaim,
  ttlMs: number,
  now = Date.now(),
): Promise<boolean> {
  return confirmClaim(db, claim, ttlMs, undefined, now);
}

/**
 * Confirm `claim` right before a platform call that shows something, and extend it by `ttlMs`
 * from now: true only while the row is still this claim's (same token and holder) and, when
 * `version` is given, still has that content. A sender checks this before each post, so one that
 * stalled past its claim's expiry and was taken over stops instead of posting what its successor
 * posts too; the extension leaves the next platform call a whole claim lifetime before anyone may
 * take the row (a stalled sender cannot lose its claim between this check and its post).
 */
export async function confirmClaim(
  db: Db,
  claim: DeliveryClaim,
  ttlMs: number,
  version?: number,
  now = Date.now(),
): Promise<boolean> {
  const r =
    version === undefined
      ? await confirmQuery(db, claim.id, claim.token, claim.holder, now + ttlMs)
      : await confirmVersionQuery(db, claim.id, claim.token, claim.holder, version, now + ttlMs);
  return Number(r.numAffectedRows ?? 0n) > 0;
}

// Prepared: a confirm precedes every post and edit, and renewals repeat it while a call waits.
const confirmQuery = preparedWrite((db: Db, id: number, token: number, holder: string, expiresAt: number) =>
  db
    .updateTable('deliveries')
    .set({ claim_expires_at: expiresAt })
    .where('id', '=', id)
    .where('claim_token', '=', token)
    .where('claimed_by', '=', holder),
);

const confirmVersionQuery = preparedWrite(
  (db: Db, id: number, token: number, holder: string, version: number, expiresAt: number) =>
    db
      .updateTable('deliveries')
      .set({ claim_expires_at: expiresAt })
      .where('id', '=', id)
      .where('claim_token', '=', token)
      .where('claimed_by', '=', holder)
      .where('version', '=', version),
);

/**
 * Save the platform references sent so far (after every post, so a crash does not repeat it).
 * With a claim, only while the claim is still this instance's.
 */
export async function saveRefs(db: Db, id: number, refs: string, claim?: DeliveryClaim): Promise<boolean> {
  const r = claim
    ? await saveClaimedRefsQuery(db, id, refs, claim.token, Date.now())
    : await saveRefsQuery(db, id, refs, Date.now());
  return Number(r.numAffectedRows ?? 0n) > 0;
}

const saveRefsQuery = preparedWrite((db: Db, id: number, refs: string, now: number) =>
  db.updateTable('deliveries').set({ refs, updated_at: now }).where('id', '=', id),
);

const saveClaimedRefsQuery = preparedWrite((db: Db, id: number, refs: string, token: number, now: number) =>
  db.updateTable('deliveries').set({ refs, updated_at: now }).where('id', '=', id).where('claim_token', '=', token),
);

/**
 * Mark a row delivered with its references, if its content is still the version that was sent;
 * otherwise it goes back to `pending` for another pass (`changed`). Either way the claim ends;
 * nothing is written when the claim was lost (`lost`: the row's new sender records its outcome).
 */
export async function markDelivered(
  db: Db,
  claim: DeliveryClaim,
  version: number,
  refs: string,
): Promise<'delivered' | 'changed' | 'lost'> {
  const now = Date.now();
  const r = await deliveredQuery(db, claim.id, claim.token, version, refs, now);
  if (Number(r.numAffectedRows ?? 0n) > 0) return 'delivered';
  // The sender knows exactly which messages landed (`refs`): nothing is ambiguous any more.
  const reopened = await db
    .updateTable('deliveries')
    .set({ refs, status: reopen, updated_at: now, ...unclaimed })
    .where('id', '=', claim.id)
    .where('claim_token', '=', claim.token)
    .where('status', 'in', OPEN)
    .executeTakeFirst();
  return Number(reopened.numUpdatedRows) > 0 ? 'changed' : 'lost';
}

const deliveredQuery = preparedWrite((db: Db, id: number, token: number, version: number, refs: string, now: number) =>
  db
    .updateTable('deliveries')
    .set({ refs, status: 'delivered', delivered_at: now, last_error: null, updated_at: now, ...unclaimed })
    .where('id', '=', id)
    .where('claim_token', '=', token)
    .where('version', '=', version)
    .where('status', '=', 'sending'),
);

/**
 * A permanent platform error: never retried (ends the claim). `refs`: the messages the sender
 * knows landed before the error (an abandoned card is queued again by a later decision, and must
 * edit them rather than post them anew).
 */
export async function markFailed(
  db: Db,
  claim: DeliveryClaim,
  error: string,
  status: 'failed' | 'abandoned' = 'failed',
  refs?: string,
): Promise<void> {
  await db
    .updateTable('deliveries')
    .set({
      status,
      last_error: error.slice(0, 500),
      updated_at: Date.now(),
      ...unclaimed,
      ...(refs === undefined ? {} : { refs }),
    })
    .where('id', '=', claim.id)
    .where('claim_token', '=', claim.token)
    .execute();
}

/**
 * A transient error: try again at `at` (any instance may; the claim ends). `mayHaveLanded` keeps
 * the row `sending` (a post failed in transit and may have reached the platform), so the next
 * attempt looks before posting again. `refs`: the messages the sender knows landed, recorded with
 * the retry — a post that went through before a later step failed (saving its reference, the
 * row's outcome) would otherwise leave a `pending` row without it, and the next attempt would
 * post it again.
 */
export async function scheduleRetry(
  db: Db,
  claim: DeliveryClaim,
  at: number,
  error: string,
  mayHaveLanded = false,
  refs?: string,
): Promise<void> {
  await db
    .updateTable('deliveries')
    .set({
      status: mayHaveLanded ? 'sending' : 'pending',
      next_attempt_at: at,
      last_error: error.slice(0, 500),
      updated_at: Date.now(),
      ...unclaimed,
      ...(refs === undefined ? {} : { refs }),
    })
    .where('id', '=', claim.id)
    .where('claim_token', '=', claim.token)
    .where('status', 'in', OPEN)
    .execute();
}

/** Statuses a printing channel settles. */
const UNSETTLED = literalList<DeliveryStatus>(['pending', 'sending', 'streaming']);

const anyUnsettledQuery = prepared((db: Db, conversationId: string) =>
  db
    .selectFrom('deliveries')
    .select('id')
    .where('conversation_id', '=', conversationId)
    .where('status', 'in', UNSETTLED)
    .limit(sql.lit(1)),
);

const settleAllQuery = preparedWrite((db: Db, conversationId: string, now: number) =>
  db
    .updateTable('deliveries')
    .set({ status: 'delivered', delivered_at: now, updated_at: now })
    .where('conversation_id', '=', conversationId)
    .where('status', 'in', UNSETTLED),
);

/**
 * Mark every open row of a conversation delivered (channels that print events, e.g. the terminal).
 * Looked for first: usually there is none (replies are written settled), and a read takes no write
 * lock.
 */
export async function settleAll(db: Db, conversationId: string): Promise<void> {
  if ((await anyUnsettledQuery(db, conversationId)).length === 0) return;
  await settleAllQuery(db, conversationId, Date.now());
}

/** Row counts per status (for `/metrics`). */
export async function deliveryCounts(db: Db): Promise<Record<DeliveryStatus, number>> {
  const rows = await db
    .selectFrom('deliveries')
    .select(['status', db.fn.countAll<number>().as('n')])
    .groupBy('status')
    .execute();
  const out: Record<DeliveryStatus, number> = {
    streaming: 0,
    pending: 0,
    sending: 0,
    delivered: 0,
    failed: 0,
    abandoned: 0,
  };
  for (const r of rows) out[r.status] = Number(r.n);
  return out;
}
