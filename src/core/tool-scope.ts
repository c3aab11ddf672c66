/**
 * What a tool call may reach on behalf of the person it acts for (the turn's requester; a job's
 * run acts for the job's owner): whether that person has admin powers now — read at each call,
 * never remembered — and which uploads the conversation sees. Files people send stay with the
 * conversation they were sent in (`delivery/upload-folders.ts`); a sub-agent sees what the chat
 * that started it sees, a job's run what the chat it was created in sees, and an admin's (or
 * the local operator's) turn sees every upload.
 */
import type { ChatRef } from '../contract/chat.js';
import { UPLOADS_FOLDER, visibleUploadFolders } from '../delivery/upload-folders.js';
import type { Db } from '../store/db.js';
import { getConversation } from '../store/repos/conversations.js';
import { getJob, JOB_CHANNEL } from '../store/repos/jobs.js';
import type { Conversation } from '../store/schema.js';
import type { PathPolicy } from '../tools/path-policy.js';

/** Sub-agents nest a few levels at most; a longer chain of parents is not followed. */
const MAX_PARENTS = 8;

/** Who holds admin powers: the local operator's channels, and admins as the store says now. */
export interface AdminCheck {
  /** True for the local operator's channels (`AccessControl.isLocal`). */
  isLocal(channel: string): boolean;
  isAdmin(principal: string): Promise<boolean>;
}

/**
 * Whether `principal` acts with admin powers now: the local operator (terminal, JSONL) always,
 * anyone else when `isAdmin` (read from the store) says so.
 */
export async function actsAsAdmin(check: AdminCheck, principal: string): Promise<boolean> {
  return check.isLocal(principal.slice(0, Math.max(0, principal.indexOf(':')))) || (await check.isAdmin(principal));
}

/**
 * The chat whose uploads a conversation sees: its own, its top parent's for a sub-agent, the
 * reporting chat's for a job's run; undefined when that chat is gone (then it sees none).
 */
export async function uploadsChatOf(db: Db, conversation: Conversation): Promise<ChatRef | undefined> {
  let conv: Conversation | undefined = conversation;
  for (let i = 0; conv?.parent_id && i < MAX_PARENTS; i++) conv = await getConversation(db, conv.parent_id);
  if (conv?.channel === JOB_CHANNEL) {
    const job = await getJob(db, conv.chat_key);
    conv = job ? await getConversation(db, job.report_conversation_id) : undefined;
  }
  if (!conv || conv.parent_id || conv.channel === JOB_CHANNEL) return undefined;
  return { channel: conv.channel, chatKey: conv.chat_key, threadKey: conv.thread_key };
}

/** What a tool call needs to work out its path policy. */
export interface ToolScopeDeps extends AdminCheck {
  db: Db;
  /** The workspace policy, seeing every upload. */
  paths: PathPolicy;
}

/**
 * The path policy of a tool call in `conversation` for `requester`: the workspace policy seeing
 * only this conversation's uploads, or all of them for an admin.
 */
export async function pathsFor(
  deps: ToolScopeDeps,
  conversation: Conversation,
  requester: string,
): Promise<PathPolicy> {
  if (await actsAsAdmin(deps, requester)) return deps.paths;
  const chat = await uploadsChatOf(deps.db, conversation);
  return deps.paths.withUploads({ folder: UPLOADS_FOLDER, visible: chat ? visibleUploadFolders(chat) : [] });
}
