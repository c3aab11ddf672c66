/**
 * Where the files people send are kept, so that they stay with the conversation they were sent
 * in: `uploads/<channel>/<chat>` for a one-to-one chat (its person; every thread of it) and for a
 * group's main conversation, `uploads/<channel>/<chat>+<thread>` for a thread or forum topic of a
 * group. A conversation's tools see its chat's folder and, in a thread, the thread's
 * ({@link visibleUploadFolders}); the path policy and the shell sandbox hide every other one.
 * Names are built so that two chats never share a folder: each part keeps letters, digits and
 * `_ @ = . -`, everything else (and a leading dot) is written `%XX`, so `+` and `/` only ever
 * separate parts.
 */
import type { ChatRef } from '../contract/chat.js';

/** The workspace folder every upload is saved under. */
export const UPLOADS_FOLDER = 'uploads';

/** One part of a folder name, escaped (see the file comment); `%` alone for an empty part. */
function part(text: string): string {
  if (text === '') return '%';
  let out = '';
  for (const ch of text) {
    const keep = /^[A-Za-z0-9_@=.-]$/.test(ch) && !(out === '' && ch === '.');
    out += keep
      ? ch
      : [...Buffer.from(ch, 'utf8')].map((b) => `%${b.toString(16).toUpperCase().padStart(2, '0')}`).join('');
  }
  return out;
}

/** The folder of a chat, without a thread: `uploads/<channel>/<chat>`. */
function chatFolder(ref: ChatRef): string {
  return `${UPLOADS_FOLDER}/${part(ref.channel)}/${part(ref.chatKey)}`;
}

/**
 * The workspace-relative folder a file sent in `ref` is saved in: a one-to-one chat's (`direct`)
 * whatever its thread; a group's thread or topic its own; a group's main conversation the chat's.
 */
export function uploadFolder(ref: ChatRef, direct: boolean): string {
  return !direct && ref.threadKey ? `${chatFolder(ref)}+${part(ref.threadKey)}` : chatFolder(ref);
}

/** The upload folders a conversation in `ref` sees: its chat's and, in a thread, the thread's. */
export function visibleUploadFolders(ref: ChatRef): string[] {
  const chat = chatFolder(ref);
  return ref.threadKey ? [chat, `${chat}+${part(ref.threadKey)}`] : [chat];
}
