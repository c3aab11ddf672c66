/**
 * `switchboard jobs add (--cron EXPR | --at TIME) [--tz ZONE] [--to CHANNEL:CHAT] [--name N]
 * PROMPT`: a job made without the model, with the validation and the answer of the
 * `schedule_job` tool. Its report goes to `--to`, else to the first admin's home chat.
 */
import type { Config } from '../config.js';
import { migrateToLatest, openStore } from '../store/db.js';
import { ensureConversation } from '../store/repos/conversations.js';
import { insertJob } from '../store/repos/jobs.js';
import type { CliOutcome } from './cli.js';
import { formatChatRef, homeChatOf, parseChatRef } from './home.js';
import { formatInstant } from '../delivery/job-lines.js';
import { machineTimeZone, parseSchedule } from './schedule.js';
import { newJobId } from './tools.js';

/** The flags of `jobs add`. */
export interface JobAddOptions {
  cron?: string;
  at?: string;
  tz?: string;
  to?: string;
  name?: string;
  prompt: string;
}

export const JOBS_ADD_USAGE =
  'usage: switchboard jobs add (--cron EXPR | --at TIME) [--tz ZONE] [--to CHANNEL:CHAT] [--name NAME] PROMPT';

/**
 * What `jobs add` reads of a channel kind (`kit/kind.ts`). The command line passes the
 * registry's kinds in: the jobs folder sits below the channels and names none of them.
 */
export interface ReportChannelKind {
  readonly name: string;
  readonly local?: boolean;
  readonly howToEnable?: string;
  configured?(config: Config): boolean;
}

/**
 * Why reports to `channel` would never be delivered with this configuration (an unknown channel,
 * or one not turned on), or null when they can be.
 */
function undeliverable(config: Config, kinds: readonly ReportChannelKind[], channel: string): string | null {
  const kind = kinds.find((k) => k.name === channel);
  if (!kind) return `there is no channel "${channel}" (channels: ${kinds.map((k) => k.name).join(', ')})`;
  if (kind.local || kind.configured?.(config)) return null;
  return `${channel} is not configured${kind.howToEnable ? ` (${kind.howToEnable})` : ''}, so its report could never be delivered`;
}

/**
 * Validate like `schedule_job`, then insert the job; a running switchboard picks it up at its next
 * re-read. `kinds`: every channel kind (`channels/registry.ts`), to refuse an undeliverable `--to`.
 */
export async function jobsAdd(
  config: Config,
  options: JobAddOptions,
  kinds: readonly ReportChannelKind[],
): Promise<CliOutcome> {
  const prompt = options.prompt.trim();
  if (!prompt) return { code: 2, stderr: `${JOBS_ADD_USAGE}  (the prompt is empty)` };
  if (prompt.length > 8_000) return { code: 2, stderr: 'jobs add: the prompt is longer than 8000 characters' };
  if (options.name !== undefined && (options.name.trim().length === 0 || options.name.length > 80))
    return { code: 2, stderr: 'jobs add: --name takes 1-80 characters' };
  const now = Date.now();
  const parsed = parseSchedule(
    { cron: options.cron, at: options.at, timezone: options.tz },
    config.jobs.timezone ?? machineTimeZone(),
    now,
  );
  if (!parsed.ok) return { code: 2, stderr: `jobs add: ${parsed.error}. Nothing was scheduled.` };
  let address = options.to === undefined ? null : parseChatRef(options.to);
  if (options.to !== undefined && !address)
    return {
      code: 2,
      stderr: `jobs add: --to takes CHANNEL:CHAT (e.g. telegram:123456789 or slack:C0123ABCD), not "${options.to}"`,
    };
  const refused = address && undeliverable(config, kinds, address.channel);
  if (refused) return { code: 2, stderr: `jobs add: --to ${options.to}: ${refused}. Nothing was scheduled.` };
  const db = openStore(config.store);
  try {
    await migrateToLatest(db);
    const admin = config.access.admins[0];
    if (!address && admin) address = await homeChatOf(db, admin);
    if (!address) {
      return {
        code: 2,
        stderr:
          'jobs add: say where the report goes with --to CHANNEL:CHAT (no admin has a home chat; set one with /sethome)',
      };
    }
    const home = undeliverable(config, kinds, address.channel);
    if (home && options.to === undefined)
      return {
        code: 2,
        stderr:
          `jobs add: the report would go to the first admin's home chat ${formatChatRef(address)}, but ` +
          `${home}; say where it goes with --to CHANNEL:CHAT. Nothing was scheduled.`,
      };
    // The job runs as the first admin (who may decide its approvals), else as the chat's user.
    const owner = admin ?? `${address.channel}:${address.chatKey}`;
    const report = await ensureConversation(db, address, owner);
    const job = await insertJob(db, {
      id: newJobId(),
      name: (options.name ?? prompt).replace(/\s+/g, ' ').trim().slice(0, 80),
      owner_id: owner,
      report_conversation_id: report.id,
      prompt,
      cron: parsed.schedule.kind === 'cron' ? parsed.schedule.cron : null,
      run_at: parsed.schedule.kind === 'at' ? parsed.schedule.at : null,
      timezone: parsed.schedule.timezone,
      next_run_at: parsed.next,
    });
    const next = formatInstant(parsed.next, job.timezone);
    return {
      code: 0,
      stdout: `Scheduled job ${job.id} “${job.name}”; next run ${next}; reports to ${formatChatRef(address)}.\n`,
    };
  } finally {
    await db.destroy();
  }
}
