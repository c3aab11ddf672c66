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

/** A {@link ChatRef} whose thread is spelled out (`''` for none), as stored in settings. */
export type FullChatRef = Required<ChatRef>;

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

/** A file a tool wants to put into the chat. */
export interface OutboundFile {
  /** Absolute path, already checked by the path policy. */
  path: string;
  caption?: string;
  kind: 'file' | 'photo' | 'voice';
}
