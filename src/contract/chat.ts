/**
 * Where a conversation lives on a platform, and what a person sends there. One word for the
 * address everywhere: {@link ChatRef}.
 */

/** A chat on a platform, optionally a thread or forum topic in it. */
export interface ChatRef {
  /** The channel's name (`telegram`, `slack`, `console`, `jsonl`, `web`, …). */
  channel: string;
  /** The platform's id of the chat (Telegram chat id, Slack channel id, a terminal session). */
  chatKey: string;
  /** Thread ts (Slack) or forum topic id (Telegram); empty or absent for none. */
  threadKey?: string;
}

/**
 * A {@link ChatRef} whose thread is spelled out (`''` for none), as stored in settings; defined
 * with the store's rows (the store sits below the contract).
 */
export type { FullChatRef } from '../store/schema.js';

/** A user message arriving from a platform. */
export interface InboundMessage extends ChatRef {
  /** Platform user id, without the channel prefix. */
  userId: string;
  userName?: string;
  text: string;
  /** Workspace-relative paths of files the user sent. */
  attachments?: string[];
  /** Stable key for de-duplication (e.g. `telegram:update:42`, `slack:event:Ev1`). */
  dedupKey?: string;
}

/**
 * A file a person sent, fetched only once the core has let them in: a stranger's files are never
 * downloaded, and a voice note is not fetched while transcription is off.
 */
export interface IncomingFile {
  /** The name the sender gave it (shown in a refusal, kept in the saved name). */
  name: string;
  /**
   * Download it into `folder` (workspace-relative: the conversation's upload folder, which the
   * core chooses; see `saveUpload` in `delivery/files.ts`).
   * @throws UploadRefused with the reason for the sender (too big, no link, HTTP failure).
   */
  fetch(folder: string): Promise<{ abs: string; rel: string }>;
}

/** A message written before the bot was asked, as the channel read it back. */
export interface EarlierMessage {
  /** The writer as the platform names them in text (a mention); null for a bot. */
  who: string | null;
  text: string;
}

/**
 * A message as a platform hands it to the core (`ChannelCore.receive`): what was sent, where,
 * and what kind of chat it is. The core decides the rest: who is let in, what is downloaded,
 * transcribed or refused, and what the sender is told.
 */
export interface ReceivedMessage extends Omit<InboundMessage, 'attachments'> {
  /**
   * A one-to-one chat with the bot: the sender is told things (a pairing code, a refusal) as
   * messages of the chat. Otherwise (a group, a channel) they are whispered to the sender alone
   * where the platform can, and posted in the chat where it cannot.
   */
  direct: boolean;
  files?: IncomingFile[];
  /** A voice note: transcribed, echoed back, and its words taken as the message. */
  voice?: IncomingFile;
  /**
   * The earlier messages of the thread, oldest first, for a conversation that starts mid-thread:
   * read only for a sender who is let in; the core bounds them and puts them before the message.
   */
  prelude?: () => Promise<EarlierMessage[]>;
  /**
   * The platform was told the message arrived and will not send it again: a failure to take it
   * is told to the sender ("please send it again") rather than thrown.
   */
  acknowledged?: boolean;
}

/** A file a tool wants to put into the chat. */
export interface OutboundFile {
  /**
   * Where the file was when it was sent (absolute, checked by the path policy): what a terminal
   * prints. Platform chats never read it: they send the copy {@link snapshot}.
   */
  path: string;
  caption?: string;
  kind: 'file' | 'photo' | 'voice';
  /** The copy taken when it was sent (`delivery/sent-files.ts`): what every platform chat sends. */
  snapshot?: string;
}

/**
 * A text file switchboard writes itself (an approval's whole arguments): sent from this text,
 * never read from a path, so nothing another process does to a file can change it.
 */
export interface OutboundText {
  /** The file's name in the chat. */
  name: string;
  text: string;
  caption?: string;
}
