/**
 * The channel kit: everything a channel folder (`src/channels/<name>/`) may import besides its own
 * files, its platform SDK and npm packages. The dependency rule `channel-imports-only-the-kit`
 * (`.dependency-cruiser.cjs`) fails the lint when a channel imports anything else of `src/`, so
 * this file is the whole seam between a channel and the program: what is not exported here, a
 * channel cannot use.
 *
 * Most of it is re-exported from the module that owns it (the contract, delivery, the store); the
 * files of this folder (`kind.ts`, `pacer.ts`, `inbound-queue.ts`, `doctor-http.ts`, …) exist only for
 * channels. Export only what a channel uses: a name nobody imports through the kit does not
 * belong here. See docs/new-channel.md.
 * @module
 */

// --- Registration: what a channel declares about itself (registry.ts lists the kinds) -------------
export type { ChannelBuildOptions, ChannelKind, DoctorCheck } from './kind.js';
export { doctorCheck } from './kind.js';
// `switchboard doctor`'s plain-HTTP probe of a platform (no SDK loaded for the doctor).
export { callPlatform, callPlatformOk, errorText } from './doctor-http.js';
export type { CliOutcome } from '../jobs/cli.js';

// --- The configuration and errors ------------------------------------------------------------------
export type { Config } from '../config.js';
export { ConfigError } from '../config.js';
export { errorMessage, SwitchboardError } from '../errors.js';
export { backoffMs } from '../backoff.js';
// A convenience (a command menu) tried again in the background until the platform takes it.
export { BackgroundRetry } from './background-retry.js';

// --- The inbound call: what a channel asks of the core ---------------------------------------------
export type { Channel, ChannelCapability, LinkSignIn } from '../contract/channel.js';
export type { Election, SubmitResult, TappedCard } from '../contract/core.js';
// The core as a channel sees it (`start(core)`): all a channel may ask of the core.
export type { ChannelCore } from '../contract/roles.js';
export type { ChatRef, EarlierMessage, IncomingFile, OutboundFile, OutboundText } from '../contract/chat.js';
export type { CoreEvent, ToolFinishStatus, TurnOutcome } from '../contract/events.js';
export type { ToolContent } from '../contract/content.js';
export type { Conversation } from '../store/schema.js';
// The core from `start(core)` on, refused before it.
export { CoreHolder } from './core-holder.js';
// A channel's inbound work: per chat in order, chats concurrently, waited for at stop.
export { InboundQueue } from './inbound-queue.js';

// --- Commands and button actions: the core runs them (`core.command`, `core.act`) -------------------
export type { ActionOutcome, CommandAnswer, CommandPlace } from '../contract/command.js';
export type { Tap } from '../contract/core.js';
// The command table as data, for platform menus and telling a command from a message.
export { commands, listedCommands } from '../core/commands.js';
// Reading a platform command's words and the thread it acts on, showing an answer in the chat, and a
// platform's own Stop button.
export {
  answerOrFailure,
  answerParts,
  commandWords,
  latestThread,
  sayAnswer,
  sayCommand,
  stopFromButton,
} from './command-answer.js';

// --- The action codec: buttons and the actions they carry ------------------------------------------
export type { Action, ApprovalChoice, Button, JobOp } from '../contract/actions.js';
export { actionFromJson, decodeAction, encodeAction, payloadCodec } from '../delivery/action-codec.js';

// --- The surface and emitter interfaces the presenter drives ---------------------------------------
export type {
  ConfirmSend,
  Drafts,
  Emitter,
  EventSurface,
  FailureClass,
  NativeStreams,
  OutboundUpload,
  Part,
  Surface,
} from '../contract/surface.js';
// What every classifier shares: error codes by table, and failures that are not the platform's answer.
export type { FailureCodes } from './failures.js';
export { classifyByCodes, classifyOwn, RenderAgain } from './failures.js';
// A native lane (drafts, streams, ephemeral notices) that falls back to plain messages once refused.
export { NativeFallback, refusalCodes } from '../delivery/native-fallback.js';
// Tool calls as steps of one streamed message per thread, where a platform streams them (`step-messages.ts`).
export { parseStepRef, StepMessageGone, StepMessages } from './step-messages.js';
// Send pacing per chat and per bot, and waiting out a short 429 in place.
export type { Limit, Rate } from './pacer.js';
export { Pacer } from './pacer.js';
export { waitingOutShort429 } from '../delivery/short-retry.js';
// A delivery's claim confirmed again by a transport's layers below the surface, after a wait of theirs.
export { confirmOfSend, withConfirm } from './send-confirm.js';
// The non-persisted lane: a notice to one person that no ledger row keeps.
export { whisper, whisperPart } from '../delivery/transient.js';

// --- Card views: what approval, question, tool and task cards show ---------------------------------
export type { BlockMarks, CardLimits, CardView, Span, SpanMarks, TaskView, ViewBlock } from '../delivery/views.js';
export { clipMiddle, fitRendered, renderSpans, renderViewBlock, trimText } from '../delivery/views.js';
export { cardEmitter, toolView } from '../delivery/cards.js';
export { approvalContent, questionContent } from '../delivery/content.js';
export { ruleLine } from '../core/rules.js';

// --- The splitter and the Markdown tree/markup helpers ---------------------------------------------
export { parseMarkdown } from '../delivery/render.js';
export type { Dialect, MarkupBlock } from '../delivery/markup.js';
export {
  breakFences,
  fenceCode,
  gridText,
  lineGrid,
  listMarker,
  plainText,
  prefixLines,
  renderBlocks,
} from '../delivery/markup.js';
export type { Markup, MessageLimits } from '../delivery/split.js';
export { groupParts, packBlocks } from '../delivery/split.js';
export type { Piece } from '../delivery/cut.js';
// `visiblePieces`: the visible text of cut pieces (delivery/cut.ts calls it `visibleText`, a name
// the kit gives to the plain-text helper below).
export { angleMarkup, cutMarkup, visibleText as visiblePieces } from '../delivery/cut.js';
export type { MarkdownLimits } from '../delivery/markdown-parts.js';
export { escapeMarkdown, packMarkdown } from '../delivery/markdown-parts.js';
export { clipCut, fencedMarkup } from '../delivery/fenced-markup.js';
// For Markdown whose renderer reads `$…$` as a formula: a price's `$` escaped outside code.
export { escapePriceDollars } from '../delivery/markdown-dollars.js';
export { visibleText } from '../delivery/visible.js';
export { codeSpans } from '../delivery/inline-code.js';
// Text in HTML: escaped into it, an entity read back as its character.
export { decodeHtmlEntity, escapeHtml } from './html.js';

// --- Notices: the fixed texts every channel shows the same way -------------------------------------
export {
  COMMAND_WORKING,
  CONSOLE_STOPS_ALL,
  commandFailedText,
  FOREIGN_BUTTON,
  FOREIGN_WORKSPACE,
  HELP_HINT,
  rateLimitNotice,
  SUGGESTED_PROMPTS,
  SYSTEM_NAME,
  TAP_FAILED,
  THINKING_STATUS,
  TITLE_ICON,
  UPLOAD,
} from '../delivery/notices.js';

// --- File staging: uploads in, files out, the upload folders and sent files ------------------------
export type { SavedUpload } from '../delivery/files.js';
export type { UploadBytes } from '../delivery/files.js';
export {
  checkOutboundFile,
  downloadUpload,
  safeFileName,
  saveUpload,
  uploadBytes,
  UploadRefused,
} from '../delivery/files.js';
// Which links may receive the bot's token when a file is downloaded.
export type { FileHosts } from './file-url.js';
export { isPlatformFileUrl } from './file-url.js';
export { uploadFolder } from '../delivery/upload-folders.js';
export { uploadOf } from '../delivery/sent-files.js';
export type { PathPolicy } from '../tools/path-policy.js';
export { openEntry } from '../tools/confined/open.js';

// --- HTTP: the shared server, webhook helpers, a fetch without keep-alive --------------------------
export { HttpServer, readBody } from '../http/server.js';
export { answerPlain, answerUnavailable, sameSecret, settledWithin, StartGate, webhookBody } from '../http/webhook.js';
// A webhook route in front of its channel: body cap, the platform's checks, the start gate.
export type { WebhookRouteOptions } from './webhook-route.js';
export { WEBHOOK_BODY_LIMIT, WebhookRoute } from './webhook-route.js';
// A signed request's replay window, and an event's acknowledgement held until it is recorded.
export { timestampSkew } from './request-time.js';
export type { AckFn } from './ack-hold.js';
export { AckHold } from './ack-hold.js';
// What `health()` says while a platform connection comes and goes.
export type { LinkEvent, LinkEvents } from './link-health.js';
export { LinkHealth } from './link-health.js';
export { plainFetch } from '../http/plain-fetch.js';
// A platform SDK's logger over pino, one level lower.
export type { LeveledSdkLogger, SdkLogger } from './sdk-logger.js';
export { leveledSdkLogger, sdkLogger, sdkLogLine } from './sdk-logger.js';

// --- The store, for channels that keep rows of their own (the web chat) ----------------------------
export type { Db } from '../store/db.js';
export { migrateToLatest, openStore } from '../store/db.js';
export type { WebMessage, WebSession } from '../store/schema.js';
export { openWakeBus } from '../store/wake-bus.js';
export { holdForWebMessage } from '../store/repos/sent-files.js';
export { listPendingCodes } from '../store/repos/pairing.js';
export {
  allPendingApprovals,
  allPendingQuestions,
  deleteSessions,
  failedDeliveries,
  findMessage,
  hasLiveAdminSession,
  insertLogin,
  insertSession,
  liveSessions,
  messageByRef,
  messagesAfter,
  sessionAlive,
  sessionByToken,
  threadMessages,
  toolOutputOfMessage,
  touchSession,
  useLogin,
  writeMessage,
} from '../store/repos/web.js';
