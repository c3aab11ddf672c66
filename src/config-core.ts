/**
 * The sections of the configuration that belong to no channel (`[llm]`, `[store]`, `[access]`,
 * `[jobs]`, …; `[tools]` is in `config-tools.ts`, `[mcp]` in `config-mcp.ts`): their keys with
 * their documentation and their short environment names.
 */
import { z } from 'zod';
import {
  boolish,
  configSection,
  csv,
  httpUrl,
  intBetween,
  nonNegativeInt,
  numeric,
  positiveInt,
} from './config-section.js';

/** True for a time zone name the runtime knows (IANA, e.g. `Europe/Berlin`). */
export function isTimeZone(name: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

/** Default system prompt: short, because operators are expected to write their own. */
export const DEFAULT_SYSTEM_PROMPT =
  'You are switchboard, a helpful assistant that can use tools. Answer concisely. ' +
  'Use tools when they help; ask the user with ask_user_clarification when a request is ambiguous.';

/** `[llm]`: the model endpoint and how conversations are sent to it. */
export const llmConfig = configSection({
  name: 'llm',
  schema: z.object({
    base_url: httpUrl
      .optional()
      .describe("Any OpenAI-compatible endpoint; unset: the SDK's default (OpenAI).")
      .meta({ example: '"https://api.openai.com/v1"' }),
    api_key: z.string().default('').describe('API key for that endpoint ("" is fine for local endpoints).'),
    model: z.string().min(1).default('gpt-4o-mini').describe('Model name.'),
    max_retries: nonNegativeInt
      .default(3)
      .describe('Retries of a model request on 429/5xx/connection errors, with backoff honouring Retry-After.'),
    request_timeout_seconds: positiveInt.default(120).describe('Timeout of one model request, seconds.'),
    max_rounds: positiveInt.default(25).describe('Model rounds per turn before the turn stops with an error.'),
    context_tokens: positiveInt.default(32_000).describe(
      `Token budget of the history sent to the model (system prompt and messages).
When a conversation would pass it, its oldest whole turns are folded into a
summary the model writes (see compaction); a tool call is never separated
from its result.`,
    ),
    tokenizer: z
      .enum(['auto', 'openai', 'estimate'])
      .default('auto')
      .describe(
        `How tokens are counted: "auto" (gpt-tokenizer for OpenAI model names, else
~4 characters a token), "openai" (always gpt-tokenizer), "estimate".`,
      ),
    compaction: boolish.default(true).describe(
      `Fold the oldest turns into a model-written summary when the history passes
context_tokens (/compact does it on request). false: the oldest turns are
left out of the request without a summary.`,
    ),
    vision: z
      .enum(['auto', 'on', 'off'])
      .default('auto')
      .describe(
        `Images users send (Telegram photos and image files, Slack images, web uploads)
go to the model as image parts: "auto" (sent; a model whose endpoint refuses
images is remembered and asked again without them, and the chat is told),
"on" (always sent), "off" (never; the model sees the file's path only).`,
      ),
    vision_max_pixels: intBetween(10_000, 40_000_000)
      .default(1_048_576)
      .describe(
        `Images are downscaled to at most this many pixels and re-encoded as JPEG
without metadata.`,
      ),
    vision_history_turns: nonNegativeInt.default(3).describe(
      `Images are sent with the newest this many user messages; older ones are
replaced by their path note (not paid for on every later request).`,
    ),
    vision_model: z
      .string()
      .min(1)
      .optional()
      .describe(
        `A second model that describes images in text for a model without vision
(one refused by "auto", or vision = "off"); the description, not the pixels,
then goes to the main model. Unset: none.`,
      )
      .meta({ example: '"gpt-4o-mini"' }),
    system_prompt: z
      .string()
      .default(DEFAULT_SYSTEM_PROMPT)
      .describe('System prompt. Saved memories and the conversation scratchpad are appended to it.'),
    temperature: numeric(z.number().min(0).max(2), 'number 0–2')
      .optional()
      .describe("Sampling temperature (0-2); unset = the endpoint's default.")
      .meta({ example: '0.2' }),
  }),
  env: { OPENAI_API_KEY: 'api_key', OPENAI_BASE_URL: 'base_url', SWITCHBOARD_MODEL: 'model' },
});

/** `[store]`: the database. */
export const storeConfig = configSection({
  name: 'store',
  schema: z.object({
    database_url: z
      .string()
      .min(1)
      .default('./data/switchboard.db')
      .describe(
        `"sqlite:PATH", a bare path, or "postgres://user:pass@host:5432/db" (several
instances may share one PostgreSQL database).`,
      ),
    pool_size: intBetween(1, 200)
      .default(10)
      .describe('Most connections of the PostgreSQL pool (per instance; unused with SQLite).'),
    lease_seconds: intBetween(2, 600)
      .default(15)
      .describe(
        `How long an instance's claim on a conversation (or the Telegram poller) lasts
without renewal; after a crash another instance takes over once it runs out.`,
      ),
  }),
  env: { DATABASE_URL: 'database_url' },
});

/** `[workspace]`: the folders the file and shell tools work in. */
export const workspaceConfig = configSection({
  name: 'workspace',
  schema: z.object({
    root: z.string().min(1).default('./workspace').describe('Root folder the file and shell tools work in.'),
    extra_read_roots: csv.default([]).describe('Extra folders the file tools may read (absolute paths).'),
    extra_write_roots: csv.default([]).describe('Extra folders the file tools may write (absolute paths).'),
    deny_globs: csv
      .default(['secrets/**', '.env*', '**/.env*', '**/*.pem', '**/id_rsa*'])
      .describe('Paths (relative to their root) that are never read, listed or searched.'),
  }),
  env: { SWITCHBOARD_WORKSPACE: 'root' },
});

const ruleSchema = z.object({
  tool: z.string().min(1),
  path: z.string().min(1).optional(),
  action: z.enum(['allow', 'require', 'deny']),
  priority: numeric(z.number().int()).default(0),
});

/** One approval rule as written in config. */
export type RuleConfig = z.infer<typeof ruleSchema>;

/** `[approvals]`: which tool calls run, ask, or are refused. */
export const approvalsConfig = configSection({
  name: 'approvals',
  schema: z.object({
    timeout_seconds: nonNegativeInt
      .default(0)
      .describe('Seconds an approval waits before it expires as rejected; 0 = wait for ever.'),
    rules: z
      .array(ruleSchema)
      .default([])
      .describe(
        `Rules: first match wins, higher priority first. tool is a glob over tool names, path an
optional glob over workspace-relative paths; action is allow, require or deny.
A tool denied without a path is never offered to the model.
Defaults without rules: read-only tools run, everything else asks.`,
      )
      .meta({
        type: 'list of tables {tool, path?, action, priority}',
        sample: `[[approvals.rules]]
tool = "bash"
action = "require"
priority = 0
[[approvals.rules]]
tool = "write_file"
path = "notes/**"
action = "allow"
priority = 10`,
      }),
  }),
});

/** `[access]`: who may talk to the bot. */
export const accessConfig = configSection({
  name: 'access',
  schema: z.object({
    admins: csv
      .default([])
      .describe('Admins ("telegram:<id>", "slack:<id>"): may approve anyone\'s calls and pair users.'),
    allowed_users: csv.default([]).describe('Principals ("channel:id") let in without pairing, on any channel.'),
    pairing_code_ttl_minutes: positiveInt.default(60).describe('Lifetime of a pairing code, minutes.'),
    rate_limit_per_minute: positiveInt
      .default(20)
      .describe('Messages per user per minute; a flood gets one notice, not one per message.'),
    daily_tokens_per_user: nonNegativeInt.default(0).describe(
      `Tokens (prompt + completion, as the endpoint reports them) a user may use per
UTC day; a turn past it is refused with a message. Admins are exempt. 0 = no limit.`,
    ),
  }),
  env: { SWITCHBOARD_ADMINS: 'admins' },
});

/** `[http]`: the shared HTTP server. */
export const httpConfig = configSection({
  name: 'http',
  schema: z.object({
    port: intBetween(0, 65535).default(8080).describe('Port for webhooks, Slack HTTP mode, /healthz and /metrics.'),
    host: z
      .string()
      .default('127.0.0.1')
      .describe(
        `Address to listen on: loopback only by default. Telegram webhooks and Slack's HTTP mode need an
address the platform reaches: "0.0.0.0" (the Docker image sets it) or a reverse proxy in front.`,
      ),
    api_token: z
      .string()
      .optional()
      .describe(
        `Bearer token of POST /api/notify (404 while unset) and of GET /metrics (while unset, /metrics
answers loopback clients only).`,
      )
      .meta({ example: '"a-long-random-string"' }),
  }),
  env: { SWITCHBOARD_HTTP_PORT: 'port', SWITCHBOARD_API_TOKEN: 'api_token' },
});

/** `[log]`. */
export const logConfig = configSection({
  name: 'log',
  schema: z.object({
    level: z
      .enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
      .default('info')
      .describe('pino level: fatal, error, warn, info, debug, trace, silent.'),
  }),
  env: { LOG_LEVEL: 'level' },
});

/** `[jobs]`: scheduled jobs. */
export const jobsConfig = configSection({
  name: 'jobs',
  schema: z
    .object({
      timezone: z
        .string()
        .min(1)
        .optional()
        .refine((tz) => tz === undefined || isTimeZone(tz), 'not an IANA time zone (e.g. Europe/Berlin)')
        .describe("Time zone of jobs scheduled without one (IANA name); unset = the machine's zone.")
        .meta({ example: '"Europe/Berlin"' }),
      missed: z
        .enum(['run_once', 'skip'])
        .default('run_once')
        .describe(
          `Occurrences missed while switchboard was down: "run_once" (one catch-up run that says how
late it is) or "skip" (none; the skip is recorded and shown in /jobs).`,
        ),
      concurrency: intBetween(1, 64)
        .default(4)
        .describe('Job runs at once per process; more due jobs wait for a free slot.'),
      approval_timeout_seconds: positiveInt.default(3_600).describe(
        `How long an approval or question of a job run waits in the reporting chat before the run is
stopped and the owner told, seconds.`,
      ),
      missed_grace_seconds: nonNegativeInt
        .default(60)
        .describe('An occurrence due this long before start-up counts as missed (else it simply runs), seconds.'),
      resync_seconds: positiveInt.default(30).describe(
        `The scheduler sleeps until the next due job; it also re-reads the schedule this often to see
jobs changed by another process (e.g. \`switchboard jobs run ID\`), seconds.`,
      ),
    })
    .describe('Scheduled jobs (schedule_job, /jobs, `switchboard jobs`).'),
});

/** `[delivery]`: the ledger of what people must see. */
export const deliveryConfig = configSection({
  name: 'delivery',
  schema: z
    .object({
      abandon_after_seconds: positiveInt
        .default(24 * 3600)
        .describe('How long a row keeps failing transiently before it is abandoned, seconds.'),
    })
    .describe(
      `Everything a person must see (replies, cards, status lines, notifications, files, errors) is a
row in the delivery ledger until the platform accepts it; undelivered rows are sent on the next
start. A permanent refusal (bot blocked, chat gone) marks the row failed at once; transient
failures (429, 5xx, network) are retried with back-off, honouring Retry-After, and the row is
abandoned (with a log line and a metric) after failing for abandon_after_seconds.`,
    ),
  env: { SWITCHBOARD_DELIVERY_ABANDON_AFTER_SECONDS: 'abandon_after_seconds' },
});

/** `[audio]`: voice in and out. */
export const audioConfig = configSection({
  name: 'audio',
  schema: z.object({
    transcription_enabled: boolish
      .default(false)
      .describe('Voice notes in (Telegram) through the OpenAI-compatible transcription endpoint.'),
    transcription_model: z.string().default('whisper-1').describe('The model that transcribes voice notes.'),
    speech_enabled: boolish
      .default(false)
      .describe('send_voice_message (Telegram) through the OpenAI-compatible speech endpoint (opus).'),
    speech_model: z.string().default('tts-1').describe('The model that speaks send_voice_message.'),
    speech_voice: z.string().default('alloy').describe('The voice it speaks with.'),
  }),
});

/** `[subagents]`: `task` and `plan`. */
export const subagentsConfig = configSection({
  name: 'subagents',
  schema: z
    .object({
      max_depth: intBetween(0, 5)
        .default(2)
        .describe('Deepest nesting: `task` is not offered to a child at this depth (0 turns sub-agents off).'),
      parallel: intBetween(1, 16)
        .default(4)
        .describe('Children of one parent that run at the same time; the rest wait their turn.'),
    })
    .describe(
      `\`task\` starts a child agent with the file, shell and web tools; \`plan\` one with read-only tools
whose plan the user accepts, rejects or annotates. Children never get job or notify tools.`,
    ),
});
