/**
 * Events the core emits for a conversation. Channels without a surface (the terminal chat and
 * JSONL) print them; the JSONL channel prints them almost verbatim (see CONTRACT.md).
 */

/** How a finished turn ended. */
export type TurnOutcome = 'done' | 'cancelled' | 'failed';

/** Status of a finished tool call as shown to users. */
export type ToolFinishStatus = 'done' | 'failed' | 'cancelled' | 'rejected';

/** Every event kind, discriminated by `type`. */
export type CoreEvent =
  | {
      type: 'delta';
      text: string;
      /** Delivery key of the streamed reply (`reply:<turn>:<round>`); its messages are recorded under it. */
      stream?: string;
      turnId?: string;
    }
  | { type: 'reply'; text: string }
  | { type: 'tool_started'; callId: string; name: string; label: string }
  | { type: 'tool_output'; callId: string; text: string }
  | { type: 'tool_finished'; callId: string; name: string; status: ToolFinishStatus; summary: string }
  | {
      type: 'approval_requested';
      id: string;
      callId: string;
      tool: string;
      label: string;
      preview: string;
      requester: string;
      /** What "always" would allow, in words (tool, and the path for file tools; for the requester only). */
      alwaysCovers?: string;
      /** Set when re-emitted at start-up for channels that print events (the card may be shown already). */
      replay?: boolean;
    }
  | {
      type: 'approval_resolved';
      id: string;
      decision: 'approved' | 'denied' | 'expired' | 'cancelled' | 'awaiting_note';
      scope: 'once' | 'session' | 'always' | null;
      by: string | null;
      note?: string | null;
      label?: string;
    }
  | {
      type: 'question';
      id: string;
      question: string;
      suggestedAnswers: string[];
      replay?: boolean;
    }
  | {
      type: 'question_resolved';
      id: string;
      status: 'answered' | 'superseded' | 'cancelled';
      answer: string | null;
      by: string | null;
    }
  /** `title` names what sent it (a job's name); `text` is Markdown, rendered like replies. */
  | { type: 'notification'; text: string; source: string; title?: string }
  | { type: 'attachment'; path: string; caption: string | null; kind: 'file' | 'photo' | 'voice' }
  | { type: 'error'; message: string }
  | { type: 'turn_started'; turnId: string }
  | { type: 'turn_done'; status: TurnOutcome };

/** An event together with the conversation it belongs to. */
export interface ConversationEvent {
  conversationId: string;
  event: CoreEvent;
}
