/**
 * The typed database. Tables are `XxxTable` interfaces; rows and inserts are derived with
 * kysely's helpers so the shape is written once. Times are epoch milliseconds (portable SQL).
 */
import type { Generated, Insertable, Selectable, Updateable } from 'kysely';

/** One chat (or thread/topic) on one channel. `archived` rows are superseded by `/new`. */
export interface ConversationsTable {
  id: string;
  channel: string;
  chat_key: string;
  thread_key: string;
  owner_id: string | null;
  model: string | null;
  scratchpad: string | null;
  archived: number;
  created_at: number;
  updated_at: number;
  /** Sub-agents: the conversation whose `task`/`plan` call started this one (null for chats). */
  parent_id: string | null;
  parent_call_id: string | null;
  /** 0 for a chat, 1 for its sub-agents, 2 for theirs. */
  depth: Generated<number>;
  agent_kind: 'task' | 'plan' | null;
  /** `task: <short prompt>`, shown on the child's cards and status lines. */
  agent_label: string | null;
  agent_prompt: string | null;
  /** JSON array of tool-name globs the parent limited the child to. */
  agent_tools: string | null;
  /** `queued` (waiting for a free slot), `running`, `finished`. */
  agent_state: 'queued' | 'running' | 'finished' | null;
  /** The child's final text (a summary, or the plan) once finished. */
  agent_result: string | null;
}

/**
 * A `ChatRef` (`contract/chat.ts`) whose thread is spelled out (`''` for none): the key a chat's
 * conversation row is found by, as stored in settings (home chats) and as a job's target. Defined
 * here, with the rows, because the store sits below `src/contract/`; the contract re-exports it.
 */
export interface FullChatRef {
  /** The channel's name (`telegram`, `slack`, `web`, …). */
  channel: string;
  /** The platform's id of the chat. */
  chatKey: string;
  /** Thread or forum topic id; `''` for none. */
  threadKey: string;
}

/** The conversation log sent to the model: user, assistant (maybe with tool calls) and tool rows. */
export interface MessagesTable {
  id: Generated<number>;
  conversation_id: string;
  turn_id: string | null;
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string | null;
  /** JSON array of `{id, name, arguments}` on assistant rows. */
  tool_calls: string | null;
  tool_call_id: string | null;
  author_id: string | null;
  created_at: number;
}

/** Inbound user messages waiting for a round boundary. Consumed rows become `messages`. */
export interface InboxTable {
  id: Generated<number>;
  conversation_id: string;
  author_id: string;
  text: string;
  /** JSON array of workspace-relative paths handed to the turn. */
  attachments: string | null;
  created_at: number;
  consumed_at: number | null;
}

/** Turn status: a turn waits in the database, never in memory. */
export type TurnStatus = 'running' | 'waiting' | 'done' | 'failed' | 'cancelled';

export interface TurnsTable {
  id: string;
  conversation_id: string;
  requester_id: string;
  status: TurnStatus;
  rounds: number;
  prompt_tokens: number;
  completion_tokens: number;
  error: string | null;
  started_at: number;
  finished_at: number | null;
}

/** Tool-call lifecycle. Cancelled and rejected are not failures. */
export type ToolCallStatus = 'pending' | 'awaiting_approval' | 'running' | 'done' | 'failed' | 'cancelled' | 'rejected';

export interface ToolCallsTable {
  /** The model's call id, made unique per conversation by the engine. */
  id: string;
  conversation_id: string;
  turn_id: string;
  message_id: number;
  position: number;
  name: string;
  /** Raw argument text exactly as the model sent it. */
  args: string;
  status: ToolCallStatus;
  /** Bumped when a call that was running at a crash is re-gated; approvals match on it. */
  attempt: Generated<number>;
  /** Text given back to the model. */
  result: string | null;
  summary: string | null;
  created_at: number;
  started_at: number | null;
  finished_at: number | null;
}

export type ApprovalStatus = 'pending' | 'awaiting_note' | 'approved' | 'rejected' | 'expired' | 'cancelled';
export type ApprovalScope = 'once' | 'session' | 'always';

export interface ApprovalsTable {
  id: string;
  conversation_id: string;
  tool_call_id: string;
  /** The tool call's attempt this approval was asked for. */
  attempt: number;
  tool_name: string;
  label: string;
  preview: string;
  /** `channel:userId` of the user whose message started the turn. */
  requester: string;
  /** Workspace-relative path the call targets (file tools), or null: what "always" covers. */
  target_path: string | null;
  /**
   * What a grant of this call covers when it has no path: the canonical JSON of the arguments the
   * tool scopes grants to (bash: `{"command":…}`); null for path-scoped calls and older rows.
   */
  grant_args: string | null;
  /** Which arguments `grant_args` holds (`core/rules.ts` GrantVersion): 1 for rows from before version 2. */
  grant_version: Generated<number>;
  /**
   * sha256 of the call's arguments in canonical JSON when the card was made: a decision applies
   * only to arguments with this hash. Null on older rows (their decision is asked again).
   */
  args_sha256: string | null;
  status: ApprovalStatus;
  scope: ApprovalScope | null;
  decided_by: string | null;
  note: string | null;
  /** Unused since the delivery ledger keeps every card's references (`deliveries`, key `card:<id>`). */
  card_ref: string | null;
  expires_at: number | null;
  created_at: number;
  decided_at: number | null;
}

export type QuestionStatus = 'pending' | 'answered' | 'superseded' | 'cancelled';

export interface QuestionsTable {
  id: string;
  conversation_id: string;
  tool_call_id: string;
  question: string;
  /** JSON array of strings. */
  suggested_answers: string;
  status: QuestionStatus;
  answer: string | null;
  answered_by: string | null;
  /** Unused since the delivery ledger keeps every card's references. */
  card_ref: string | null;
  created_at: number;
  answered_at: number | null;
  /** Holder id of the process whose running tool waits for this answer (MCP elicitation, sampling); null: the question tool. */
  waiter: string | null;
}

export interface ApprovalRulesTable {
  id: Generated<number>;
  tool_glob: string;
  path_glob: string | null;
  action: 'allow' | 'require' | 'deny';
  priority: number;
  /** Set for "this session" grants; null for global rules. */
  conversation_id: string | null;
  /** The principal an "always" grant was made for; null: everyone (older rules). */
  user_id: string | null;
  /** The exact arguments (canonical JSON, see `approvals.grant_args`) the rule covers; null: any. */
  args_exact: string | null;
  /** Which arguments `args_exact` holds (see `approvals.grant_version`): 1 for grants from before version 2. */
  grant_version: Generated<number>;
  created_by: string | null;
  created_at: number;
}

/** Inbound de-duplication: Telegram update ids, Slack event ids. */
export interface InboundKeysTable {
  key: string;
  created_at: number;
}

export interface AuditTable {
  id: Generated<number>;
  conversation_id: string | null;
  tool_call_id: string | null;
  kind: string;
  /** JSON object. */
  data: string;
  created_at: number;
}

/** The display name a principal last came with (see `core/names.ts`). */
export interface PeopleTable {
  /** `channel:userId`. */
  principal: string;
  name: string;
  /** When the name was last recorded, ms since the epoch. */
  seen_at: number;
}

export interface KnownToolsTable {
  name: string;
  source: string;
  description: string;
  first_seen: number;
  last_seen: number;
}

export interface PairingCodesTable {
  code: string;
  channel: string;
  user_id: string;
  display_name: string;
  chat_key: string;
  status: 'pending' | 'approved';
  created_at: number;
  expires_at: number;
  /** When the approved user was told they were let in; null until then. */
  welcomed_at: Generated<number | null>;
}

export interface PairedUsersTable {
  channel: string;
  user_id: string;
  approved_by: string;
  created_at: number;
}

/** Small key/value settings (e.g. the Telegram home chat for notifications). */
export interface SettingsTable {
  key: string;
  value: string;
  updated_at: number;
}

/** A platform update fetched but not yet handled (see the Telegram update journal). */
export interface InboundJournalTable {
  /** The platform it came from (`telegram`). */
  source: string;
  update_id: number;
  /** The update as the platform sent it (JSON). */
  payload: string;
  created_at: number;
}

/** An update fetched from a platform and recorded before it is handled (replayed after a crash). */
export interface JournaledUpdate {
  id: number;
  payload: string;
}

/**
 * A saved memory (`remember`): a person's own, or the shared memory every prompt shows (owner
 * `''`, written by admins). Keys are unique per owner. Indexed by `memories_fts` (FTS5).
 */
export interface MemoriesTable {
  id: Generated<number>;
  /** The principal (`channel:userId`) whose memory it is; `''` for the shared memory. */
  owner: string;
  key: string;
  value: string;
  /** `channel:userId` of the requester of the turn that saved it. */
  created_by: string | null;
  created_at: number;
  updated_at: number;
}

/** Which files a conversation has read (`edit_file` needs one), with what the file was then. */
export interface FileReadsTable {
  conversation_id: string;
  /** Canonical absolute path. */
  path: string;
  /** sha256 of the whole file at read time; null when it was too large to hash on a range read. */
  sha256: string | null;
  size: number;
  mtime_ms: number;
  read_at: number;
}

/** `active` jobs are scheduled; `paused` ones wait for resume; `finished` one-offs ran; `deleted` ones are gone. */
export type JobState = 'active' | 'paused' | 'finished' | 'deleted';

/** A scheduled job: a prompt run as a turn of its own conversation (`job:<id>`). */
export interface JobsTable {
  /** Short id (8 characters), also in `job:<id>` and in button data. */
  id: string;
  name: string;
  /** `channel:userId` of the owner; runs use it as the requester. */
  owner_id: string;
  /** Conversation that receives the output, approvals and questions. */
  report_conversation_id: string;
  prompt: string;
  /** 5- or 6-field cron expression; null for a one-off. */
  cron: string | null;
  /** One-off instant (epoch ms); null for a cron job. */
  run_at: number | null;
  /** IANA time zone the schedule is read in. */
  timezone: string;
  state: JobState;
  /** Next scheduled occurrence; null when none is left (or the job is paused/deleted). */
  next_run_at: number | null;
  /** Set by "run now"; the scheduler claims it like an occurrence. */
  run_requested_at: number | null;
  last_run_at: number | null;
  /** Outcome of the last occurrence: a {@link JobRunStatus}. */
  last_outcome: string | null;
  last_detail: string | null;
  /** Occurrences skipped (overlap or missed with `jobs.missed = skip`). */
  skipped_runs: Generated<number>;
  created_at: number;
  updated_at: number;
}

/** A run's state: `running` until its turn ends; `skipped` never ran. */
export type JobRunStatus = 'running' | 'done' | 'failed' | 'cancelled' | 'timed_out' | 'skipped';

/** One occurrence of a job, claimed at most once (primary key: job id + scheduled instant). */
export interface JobRunsTable {
  job_id: string;
  scheduled_at: number;
  /** `schedule`, `catch_up` (after downtime) or `manual` (run now). */
  trigger: 'schedule' | 'catch_up' | 'manual';
  status: JobRunStatus;
  /** How long after its scheduled instant the run started. */
  late_ms: Generated<number>;
  /** Earlier occurrences folded into this one (missed while switchboard was down). */
  missed: Generated<number>;
  detail: string | null;
  claimed_by: string | null;
  started_at: number | null;
  finished_at: number | null;
}

/**
 * Delivery status: `streaming` (a reply being streamed; its partial text and message references
 * kept), `pending` (to be shown or brought up to date), `sending` (claimed; a crash leaves it
 * ambiguous), `delivered`, `failed` (a permanent platform error; never retried) and `abandoned`
 * (transient errors for longer than `delivery.abandon_after_seconds`).
 */
export type DeliveryStatus = 'streaming' | 'pending' | 'sending' | 'delivered' | 'failed' | 'abandoned';

/** What kind of thing a delivery shows. */
export type DeliveryKind = 'reply' | 'card' | 'status' | 'notification' | 'notice' | 'attachment' | 'error';

/** One thing a person must see, with the platform references of what was sent for it. */
export interface DeliveriesTable {
  id: Generated<number>;
  conversation_id: string;
  kind: DeliveryKind;
  /**
   * Unique per thing shown: `reply:<turn>:<round>`, `card:<approval id>` (its copies
   * `card:<approval id>:<where>`), `notify:<job>:<n>`, a tapped list `list:<channel>:<chat>:at:<message>`.
   */
  idem_key: string;
  /** JSON of a `DeliveryContent` (src/delivery/content.ts). */
  content: string | null;
  status: DeliveryStatus;
  /** JSON array of `{ ref, shown }`: one platform message per rendered part, in order. */
  refs: Generated<string>;
  /** Bumped whenever `content` changes, so a sync of an older version does not mark it delivered. */
  version: Generated<number>;
  attempts: Generated<number>;
  next_attempt_at: Generated<number>;
  last_error: string | null;
  /** The turn of a streamed reply (to close its stream when the turn ends). */
  turn_id: string | null;
  created_at: number;
  updated_at: number;
  delivered_at: number | null;
  /** The instance sending the row (null when nobody is); see `claim_expires_at`. */
  claimed_by: Generated<string | null>;
  /** Fencing number, bumped on every claim: outcomes are recorded only under the current one. */
  claim_token: Generated<number>;
  /** When the claim runs out and another instance may take the row over (0: not claimed). */
  claim_expires_at: Generated<number>;
  /**
   * The approval or question whose buttons the content offers (null otherwise): the cards a start
   * checks against their decisions (`delivery/card-repair.ts`).
   */
  open_card: Generated<string | null>;
}

/** Change counters of state processes keep in memory (see `src/store/hot-cache.ts`). */
export interface StoreVersionsTable {
  /** `rules`, `memories`, `conversations`, `grants`. */
  name: string;
  version: number;
}

/** How far a search index has been filled (`messages`: the newest message id indexed). */
export interface FtsProgressTable {
  name: string;
  upto: number;
}

/** A lazy tool group granted to a conversation by `activate_tools`. */
export interface ToolGrantsTable {
  conversation_id: string;
  tool_group: string;
  granted_by: string | null;
  granted_at: number;
}

/** The usage one model request reported (a turn's round, or a summary), for `/usage` and the daily limit. */
export interface ModelUsageTable {
  id: Generated<number>;
  conversation_id: string;
  turn_id: string | null;
  /** `channel:userId` the tokens count against. */
  requester_id: string;
  model: string;
  /** `turn` (a round of a turn) or `summary` (folding old turns). */
  kind: 'turn' | 'summary';
  prompt_tokens: number;
  completion_tokens: number;
  created_at: number;
}

/** A model-written summary of a conversation's messages up to `upto_message_id` (inclusive). */
export interface SummariesTable {
  id: Generated<number>;
  conversation_id: string;
  upto_message_id: number;
  content: string;
  created_at: number;
}

/** Everything kysely knows about. Later migrations add their tables here. */
export interface Database {
  conversations: ConversationsTable;
  messages: MessagesTable;
  inbox: InboxTable;
  turns: TurnsTable;
  tool_calls: ToolCallsTable;
  approvals: ApprovalsTable;
  questions: QuestionsTable;
  approval_rules: ApprovalRulesTable;
  inbound_keys: InboundKeysTable;
  audit: AuditTable;
  known_tools: KnownToolsTable;
  people: PeopleTable;
  pairing_codes: PairingCodesTable;
  paired_users: PairedUsersTable;
  settings: SettingsTable;
  inbound_journal: InboundJournalTable;
  memories: MemoriesTable;
  file_reads: FileReadsTable;
  leases: LeasesTable;
  fts_progress: FtsProgressTable;
  store_versions: StoreVersionsTable;
  jobs: JobsTable;
  job_runs: JobRunsTable;
  deliveries: DeliveriesTable;
  tool_grants: ToolGrantsTable;
  web_logins: WebLoginsTable;
  web_sessions: WebSessionsTable;
  web_messages: WebMessagesTable;
  model_usage: ModelUsageTable;
  summaries: SummariesTable;
  sent_files: SentFilesTable;
  sent_file_chunks: SentFileChunksTable;
}

export type Conversation = Selectable<ConversationsTable>;
export type Message = Selectable<MessagesTable>;
export type NewMessage = Insertable<MessagesTable>;
export type InboxItem = Selectable<InboxTable>;
export type Turn = Selectable<TurnsTable>;
export type ToolCallRow = Selectable<ToolCallsTable>;
export type ToolCallUpdate = Updateable<ToolCallsTable>;
export type Approval = Selectable<ApprovalsTable>;
export type Question = Selectable<QuestionsTable>;
export type ApprovalRule = Selectable<ApprovalRulesTable>;
export type PairingCode = Selectable<PairingCodesTable>;
export type Job = Selectable<JobsTable>;
export type JobRun = Selectable<JobRunsTable>;
export type NewPairingCode = Insertable<PairingCodesTable>;
export type Delivery = Selectable<DeliveriesTable>;

/** Work claimed by one instance at a time: a conversation's turns, the Telegram poller. */
export interface LeasesTable {
  name: string;
  /** The instance holding (or last holding) the lease. */
  holder: string;
  /** Fencing token: bumped on every claim. */
  token: number;
  /** Epoch ms after which another instance may claim it; 0 once released. */
  expires_at: number;
  /** 1 when the last claim took it from another holder whose lease had run out. */
  taken_over: number;
  claimed_at: number;
}

/** A lease this instance holds: a name, its fencing token, and whether it was taken over. */
export interface HeldLease {
  name: string;
  token: number;
  /** True when it was taken from another instance whose lease had run out. */
  takenOver: boolean;
}

/** A one-time login link of the web chat (only the token's hash is kept). */
export interface WebLoginsTable {
  token_hash: string;
  user_name: string;
  admin: number;
  created_at: number;
  expires_at: number;
  used_at: number | null;
}

/** A web chat session (the cookie holds the token; only its hash is kept). */
export interface WebSessionsTable {
  id: string;
  token_hash: string;
  user_name: string;
  admin: number;
  csrf: string;
  created_at: number;
  last_seen_at: number;
  expires_at: number;
}

/** A message as the web chat shows it now; an edit replaces the row under a newer id. */
export interface WebMessagesTable {
  id: Generated<number>;
  ref: string;
  chat_key: string;
  thread_key: string;
  pos: number;
  body: string;
  deleted: Generated<number>;
  created_at: number;
}

export type WebSession = Selectable<WebSessionsTable>;
export type WebMessage = Selectable<WebMessagesTable>;

/** The copy of a file taken when a tool sent it (see `src/delivery/sent-files.ts`). */
export interface SentFilesTable {
  id: string;
  /** The name the chat shows. */
  name: string;
  /** Bytes (final once `complete`). */
  size: number;
  /** 1 once every chunk is stored; an incomplete copy is never sent. */
  complete: Generated<number>;
  /** The delivery sending it (`deliveries.idem_key`); kept while that delivery is open. */
  delivery_key: string | null;
  /** The web chat message offering it for download (`web_messages.ref`); kept while that message is. */
  web_ref: string | null;
  created_at: number;
}

/** The content of a sent file, in order, up to 1 MB a chunk. */
export interface SentFileChunksTable {
  file_id: string;
  seq: number;
  data: Buffer;
}

export type SentFile = Selectable<SentFilesTable>;
