/**
 * What a user does to their conversations as a whole: rename one, delete one, and read a tool
 * call's output from its status line. Every route addresses the signed-in user's own chat only
 * (the chat key is the session's user; a thread key of someone else's conversation names nothing
 * of theirs and gets 404), and changes reach every open tab through the stream.
 *
 * A conversation's name and deletion are kept in one row of the thread in `web_messages` (a body
 * of kind `thread`, under a reference derived from the user and thread): the page reads it like
 * a message, so other tabs and instances follow with nothing new to relay. A deleted thread's rows
 * are tombstoned; the marker stays so that a message delivered late (the end of a stopped turn)
 * does not bring the conversation back.
 */
import { createHash } from 'node:crypto';
import type http from 'node:http';
import { SwitchboardError, messageByRef, threadMessages, toolOutputOfMessage } from '../../kit/index.js';
import type { WebSession } from '../../kit/index.js';
import type { ChatDeps } from './chat-routes.js';
import { principal, refOf } from './chat-routes.js';
import { field, HttpRefusal, json, readJson } from './http.js';
import type { WebBody } from './surface.js';

/** Longest name of a conversation. */
export const MAX_TITLE_CHARS = 80;

/** The reference of a thread's own row: one per user and thread, never a message's (those are UUIDs). */
export function threadRowRef(chatKey: string, threadKey: string): string {
  return `thread:${createHash('sha256')
    .update(JSON.stringify([chatKey, threadKey]))
    .digest('hex')
    .slice(0, 40)}`;
}

/**
 * The user's conversation `thread`, or 404: it must hold a message of theirs and not be deleted.
 * @returns its shown messages and its current thread row (if any).
 */
async function ownThread(
  deps: ChatDeps,
  s: WebSession,
  thread: string,
): Promise<{ refs: string[]; meta: Extract<WebBody, { kind: 'thread' }> | null }> {
  refOf(s, thread);
  const rows = await threadMessages(deps.db, s.user_name, thread);
  const metaRow = rows.find((r) => r.ref === threadRowRef(s.user_name, thread));
  const meta = metaRow ? (JSON.parse(metaRow.body) as Extract<WebBody, { kind: 'thread' }>) : null;
  const refs = rows.filter((r) => r !== metaRow).map((r) => r.ref);
  if (refs.length === 0 || meta?.deleted) throw new HttpRefusal(404, 'no such conversation');
  return { refs, meta };
}

/** Write a thread's own row (same reference each time, so it replaces the last). */
async function writeThreadRow(deps: ChatDeps, s: WebSession, thread: string, body: WebBody): Promise<void> {
  await deps.surface.writeAs(threadRowRef(s.user_name, thread), { chatKey: s.user_name, threadKey: thread }, body);
}

/** `POST /api/conversation/rename {thread, title}`: name a conversation (an empty title: its first message again). */
export async function rename(deps: ChatDeps, req: http.IncomingMessage, res: http.ServerResponse, s: WebSession) {
  const body = await readJson(req);
  const thread = field(body, 'thread');
  const title = field(body, 'title').replace(/\s+/g, ' ').trim();
  if (title.length > MAX_TITLE_CHARS)
    throw new HttpRefusal(400, `expected "title" to be at most ${MAX_TITLE_CHARS} characters`);
  await ownThread(deps, s, thread);
  await writeThreadRow(deps, s, thread, { kind: 'thread', title: title || null, deleted: false });
  json(res, 200, { ok: true, title: title || null });
}

/**
 * `POST /api/conversation/delete {thread}`: stop its turn, archive it for the model (a message
 * sent there again would start afresh), and take its messages off every page.
 */
export async function remove(deps: ChatDeps, req: http.IncomingMessage, res: http.ServerResponse, s: WebSession) {
  const thread = field(await readJson(req), 'thread');
  const { refs } = await ownThread(deps, s, thread);
  const ref = refOf(s, thread);
  const core = deps.core();
  try {
    await core.chats.stop(ref, principal(s));
    await core.chats.newConversation(ref, principal(s));
  } catch (err) {
    // Work of someone else (a job's run) may not be stopped by this user: say so, delete nothing.
    if (err instanceof SwitchboardError) throw new HttpRefusal(409, err.message);
    throw err;
  }
  await writeThreadRow(deps, s, thread, { kind: 'thread', title: null, deleted: true });
  const address = { chatKey: s.user_name, threadKey: thread };
  for (const r of refs) await deps.surface.delete(address, r);
  json(res, 200, { ok: true, deleted: refs.length });
}

/** `GET /api/tool-output?ref=…`: what a finished tool call returned, from its line on the page. */
export async function toolOutput(deps: ChatDeps, res: http.ServerResponse, s: WebSession, url: URL): Promise<void> {
  const ref = url.searchParams.get('ref') ?? '';
  const row = await messageByRef(deps.db, ref);
  if (!row || row.chat_key !== s.user_name || row.deleted) throw new HttpRefusal(404, 'no such tool call');
  const body = JSON.parse(row.body) as WebBody;
  if (body.kind !== 'card' || body.view.card !== 'tool') throw new HttpRefusal(404, 'no such tool call');
  const output = await toolOutputOfMessage(deps.db, s.user_name, ref);
  if (output === undefined) throw new HttpRefusal(404, 'no output was kept for this call');
  json(res, 200, { output });
}
