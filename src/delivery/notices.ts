/**
 * The words people read, channel-neutral, in one place: refusals, the flood notice, approval
 * scopes, tool icons, the jobs list. Plain text or Markdown; each channel's formatter renders it.
 */
import type { ToolContent } from '../contract/content.js';
import type { RefusalReason } from '../contract/core.js';
import { jobLine } from './job-lines.js';
import type { Job } from '../store/schema.js';

/** What "approve for …" means, after "Approved". */
export const SCOPE_TEXT: Record<'once' | 'session' | 'always', string> = {
  once: 'once',
  session: 'for this session',
  always: 'always',
};

/** The icon of a tool line in each state. */
export const TOOL_ICON: Record<ToolContent['state'], string> = {
  running: '🔧',
  done: '✅',
  failed: '❌',
  cancelled: '⏹',
  rejected: '🚫',
};

/** Jobs listed in one message (Telegram caps a keyboard at 100 buttons, Slack a message at 50 blocks). */
export const MAX_LISTED_JOBS = 20;

/** The jobs a list message shows (the rest are counted). */
export function listedJobs(jobs: Job[]): Job[] {
  return jobs.slice(0, MAX_LISTED_JOBS);
}

/** The `/jobs` list as Markdown. */
export function jobsMarkdown(jobs: Job[]): string {
  if (jobs.length === 0) return 'No scheduled jobs. Ask me to schedule one, e.g. “every weekday at 9 check the build”.';
  const shown = listedJobs(jobs);
  const more =
    jobs.length > shown.length ? `\n\n…and ${jobs.length - shown.length} more (see \`switchboard jobs list\`).` : '';
  return `**Scheduled jobs**\n\n${shown.map((j) => `- ${jobLine(j)}`).join('\n')}${more}`;
}

/** Why a decision, an answer or a button was refused, in a sentence. */
export function refusalText(
  reason: RefusalReason,
  kind: 'approval' | 'question' = 'approval',
  decidedBy?: string | null,
): string {
  const what = kind === 'approval' ? 'request' : 'question';
  switch (reason) {
    case 'not_allowed':
      return (
        '⛔ You are not allowed to do this. Only the person who started this turn (or an admin) can ' +
        `${kind === 'approval' ? 'decide this request' : 'answer this question'}.`
      );
    case 'unknown':
      return `❔ I can't find this ${what} any more.`;
    case 'already_decided':
      return `ℹ️ This ${what} was already ${kind === 'approval' ? 'decided' : 'answered'}${decidedBy ? ` by ${decidedBy}` : ''}.`;
    case 'expired':
      return `⌛ This ${what} has expired.`;
  }
}

/** The one notice for a flood: every message in the next `retryAfterMs` is dropped too. */
export function rateLimitNotice(retryAfterMs: number): string {
  const seconds = Math.max(1, Math.ceil(retryAfterMs / 1000));
  return `⏳ You are sending messages too fast: this one and any you send in the next ${seconds} s are dropped. Send them again after that.`;
}

/** A button this bot did not make, or one from before an upgrade. */
export const FOREIGN_BUTTON = 'This button is not mine or is outdated.';

/** What the person who tapped a card's button is told when the tap did what it asked. */
export const TAPPED = {
  approved: 'Approved.',
  denied: 'Denied.',
  deniedAwaitingNote: 'Denied. Reply with a note for the model, or choose “No note”.',
  answered: 'Answered.',
  paired: 'Paired.',
} as const;

/** The button under a pairing request an admin is shown. */
export function pairingApproveLabel(code: string): string {
  return `✅ Approve ${code}`;
}

/** A pairing tap by someone who is not an admin. */
export const PAIRING_ADMIN_ONLY = '⛔ Only an admin can approve a pairing.';

/** A pairing that could not be approved, and why. */
export function pairingRefusedText(reason: string): string {
  return `Cannot pair: ${reason}`;
}

/** A `/jobs` command or button where no job service runs. */
export const JOBS_UNAVAILABLE = 'Scheduled jobs are not available here.';

/** A tap or a command from a workspace (a Slack team) this bot does not serve. */
export const FOREIGN_WORKSPACE = {
  action: '⛔ This bot does not take decisions from this workspace.',
  command: '⛔ This bot does not serve this workspace.',
} as const;

/** Said in a group when what was for the sender alone went to their direct chat with the bot instead. */
export const SENT_DIRECTLY = "📬 I've sent you a direct message. If none arrives, message me directly.";

/** Handling a tap failed unexpectedly; nothing was decided. */
export const TAP_FAILED = '⚠️ Something went wrong; please try again.';

/** Handling a command failed unexpectedly: why, in the error's words. */
export function commandFailedText(why: string): string {
  return `⚠️ That failed: ${why}`;
}

/** The icon before a notification's title line. */
export const TITLE_ICON = '🔔';

/** Markdown-escape text a person wrote (a transcription, a file name) before it goes into Markdown. */
export function escapeMarkdown(text: string): string {
  return text.replace(/[\\`*_{}[\]()#+\-.!<>|~]/g, '\\$&');
}

/** What an unknown person is told: their pairing code and how it is approved. */
export function pairingCodeMarkdown(code: string, expiresAt: number, now = Date.now()): string {
  const minutes = Math.max(1, Math.round((expiresAt - now) / 60_000));
  return `🔒 I don't know you yet. Your pairing code is \`${code}\` (valid ${minutes} min).\nAsk the operator to run \`switchboard pair approve ${code}\`.`;
}

/** What an admin is asked when someone wants in (with an approve button where the platform has buttons). */
export function pairingRequestMarkdown(code: string, from: string): string {
  return `🔑 Pairing request \`${code}\` from chat \`${from}\`.`;
}

/** The pairing request once an admin approved it. */
export function pairedMarkdown(channel: string, userId: string, byName: string): string {
  return `✅ Paired ${escapeMarkdown(channel)} user \`${userId}\` (by ${escapeMarkdown(byName)}).`;
}

/** Voice notes. */
export const VOICE = {
  off: '🎤 Voice messages are off here. Please type your message.',
  failed: (why: string) => `🎤 I could not transcribe that voice note: ${escapeMarkdown(why)}`,
  silent: '🎤 I could not hear any words in that voice note.',
  heard: (text: string) => `🎤 _${escapeMarkdown(text)}_`,
} as const;

/** A size for people: `20 MB`, `1.5 MB`, `5 KB`. */
export function formatBytes(n: number): string {
  return n >= 1024 * 1024 ? `${Number((n / (1024 * 1024)).toFixed(1))} MB` : `${Math.ceil(n / 1024)} KB`;
}

/** Why a file a person sent was not taken, said after its name (see {@link filesRefusedMarkdown}). */
export const UPLOAD = {
  tooBig: (size: number | undefined, cap: number) =>
    size === undefined
      ? `it is over the ${formatBytes(cap)} this bot accepts`
      : `it is ${formatBytes(size)}; this bot accepts files up to ${formatBytes(cap)}`,
  /** Over what the platform lets a bot download at all, whatever the bot's own cap. */
  overPlatform: (platform: string, size: number | undefined, limit: number) =>
    `${size === undefined ? 'it is too big' : `it is ${formatBytes(size)}`}; ${platform} lets bots ` +
    `download at most ${formatBytes(limit)}. Please send a smaller file or a link`,
  noLink: (platform: string) => `${platform} gave no download link`,
  foreignLink: (platform: string) => `not a ${platform} file link`,
  http: (status: number, hint?: string) => `download failed (HTTP ${status}${hint ? `; ${hint}` : ''})`,
  failed: (why: string) => `download failed (${why})`,
  cannotStore: (why: string) => `cannot store uploads: ${why}`,
} as const;

/**
 * Why a file the bot was asked to send cannot go (the tool's answer, which the model passes
 * on). `limit` names whose limit it is: a config key, or the platform's own.
 */
export const SEND_FILE = {
  unreadable: (name: string, why: string) => `Cannot read ${name}: ${why}`,
  notAFile: (name: string) => `${name} is not a regular file`,
  tooBig: (name: string, size: number, cap: number, limit: string) =>
    `${name} is ${formatBytes(size)}, over the ${formatBytes(cap)} limit (${limit})`,
} as const;

/** Files a person sent that were not taken, one `name: reason` each. */
export function filesRefusedMarkdown(refused: Array<{ name: string; why: string }>): string {
  return `📎 ${escapeMarkdown(`I could not take ${refused.map((r) => `${r.name}: ${r.why}`).join('; ')}.`)}`;
}

/** Something failed while taking a message; it was acknowledged, so it must be sent again. */
export const TAKE_FAILED = '⚠️ Something went wrong taking that message; please send it again.';

/** The last line of `/help`: how to talk to the bot, in the words of each kind of chat. */
export const HELP_HINT = {
  any: 'Anything else you write goes to the assistant.',
  telegram: 'Anything else you write goes to the assistant. In groups, mention me or reply to me.',
  slack: 'Talk to me in a DM, or @mention me in a channel (I answer in the thread).',
  console: 'Anything else you write goes to the model; /quit leaves.',
} as const;

/**
 * No model is configured (no key for OpenAI's endpoint, the default): what to set, or the demo. The
 * start-up warning, `switchboard doctor` and the answer to a chat's first message all say this.
 */
export const MODEL_NOT_CONFIGURED =
  'No model is configured: OPENAI_API_KEY is not set. Set it for OpenAI (with OPENAI_BASE_URL for ' +
  'another hosted endpoint), or set OPENAI_BASE_URL alone to a local server such as Ollama ' +
  '(`http://127.0.0.1:11434/v1`), then restart switchboard. To see it work first, try the scripted ' +
  'demo model: `switchboard start --demo` (in a clone: `npm start -- --demo`).';

/**
 * The terminal chat inside `switchboard start`, beside other chats (`others`: "the web chat"):
 * leaving it ends the process, so it says so when it opens, in /help and when it leaves.
 */
export const CONSOLE_STOPS_ALL = {
  hint: (others: string) => `/quit (or Ctrl-C with nothing running) stops switchboard, ${others} too.`,
  leaving: (others: string) => `(leaving: switchboard stops, ${others} too)`,
} as const;

/** A command's first answer when the real one takes longer than the platform waits (Slack's 3 s). */
export const COMMAND_WORKING = 'Working on it…';

/** Who decided or asked, when no person did (an expiry, a job). */
export const SYSTEM_NAME = 'the system';

/** The status line shown while the model works, where a platform shows one (Slack's assistant threads). */
export const THINKING_STATUS = 'is thinking…';

/** Prompts offered when a person opens an assistant thread (Slack's assistant pane). */
export const SUGGESTED_PROMPTS: Array<{ title: string; message: string }> = [
  { title: 'What can you do?', message: 'What can you do? Give me a short overview of your tools.' },
  { title: 'Look at the workspace', message: 'List the files in the workspace and tell me what this project is.' },
  { title: 'Explain a file', message: 'Read README.md in the workspace and summarise it.' },
];

/**
 * The earlier messages of a thread, put before the message that starts a conversation mid-thread
 * (the model reads it; see `threadPrelude` in core/reception.ts). `bot` names a bot's message.
 */
export const THREAD_PRELUDE = {
  start: '[Earlier in this thread]',
  end: '[End of earlier messages]',
  bot: 'bot',
} as const;
