/**
 * The job service: owns the scheduler loop, starts claimed runs as turns of their own
 * conversation (`job:<id>`, the owner as requester), forwards their cards and questions to the
 * conversation the job reports to, stops runs whose approval or question waits too long, and
 * reports each finished run there (naming the job, saying how late it was).
 *
 * Everything a run needs to continue is in the database: a run row claimed with its prompt, the
 * job conversation's turn. A restart finishes runs whose turn ended while the process was down
 * and re-arms question timeouts.
 */
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import type { Logger } from 'pino';
import type { JobControls } from '../contract/core.js';
import type { Core, CoreService } from '../core/core.js';
import type { CoreEvent } from '../contract/events.js';
import { getQuestion } from '../store/repos/approvals.js';
import { activeTurn } from '../store/repos/turns.js';
import { pendingInbox } from '../store/repos/log.js';
import {
  claimOccurrence,
  dueOccurrences,
  earliestDue,
  finishRun,
  getJob,
  JOB_CHANNEL,
  jobConversationId,
  lastTurnOutcome,
  listJobs,
  jobReportConversations,
  type ServedFilter,
  pendingJobQuestions,
  runningRunOf,
  runningRuns,
  setRunDetail,
} from '../store/repos/jobs.js';
import type { Conversation, Job } from '../store/schema.js';
import type { AnyTool } from '../tools/types.js';
import type { OutboundFile } from '../contract/chat.js';
import { applyJobAction, type JobActionResult, type JobOp } from './actions.js';
import { type FullChatRef, homeChatOf, setHomeChat } from './home.js';
import { JobChannel, type JobEventSink } from './job-channel.js';
import { createJobMetrics, type JobMetrics } from './metrics.js';
import { NotifySink } from './notify-sink.js';
import { reportOf, runMessage } from './messages.js';
import { planOccurrence } from './plan.js';
import { QuestionTimers } from './question-timers.js';
import { mirrorApproval, mirrorQuestion } from './report-cards.js';
import { formatDuration } from './schedule.js';
import { type Clock, Scheduler, systemClock } from './scheduler.js';
import { jobTools } from './tools.js';

/** Options of {@link JobService}. */
export interface JobServiceOptions {
  /** Defaults to the system clock; the scheduler tests pass a fake one. */
  clock?: Clock;
}

/** Prefix of the principal that stops runs which waited too long. */
const TIMEOUT_ACTOR = 'jobs:timeout';
const TIMED_OUT = 'timed out: ';

const byCore = new WeakMap<Core, JobService>();

/** Scheduled jobs, their runs and notifications, for one core. */
export class JobService implements CoreService, JobEventSink, JobControls {
  private core_: Core | null = null;
  private scheduler: Scheduler | null = null;
  private sink_: NotifySink | null = null;
  private readonly clock: Clock;
  /** Jobs with a run going in this process (bounded by `jobs.concurrency`). */
  private readonly inFlight = new Set<string>();
  private readonly questionTimers = new QuestionTimers((questionId, jobId) =>
    this.questionExpired(questionId, jobId).catch((err) => this.log.warn({ err, jobId }, 'question timeout failed')),
  );
  private startedAt = 0;
  private readonly instance = `${os.hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
  private log_: Logger | null = null;
  private metrics: JobMetrics | null = null;

  constructor(options: JobServiceOptions = {}) {
    this.clock = options.clock ?? systemClock;
  }

  private get core(): Core {
    if (!this.core_) throw new Error('job service used before the core attached it');
    return this.core_;
  }

  private get log(): Logger {
    return this.log_ ?? this.core.log;
  }

  /** The notify sink (for `/api/notify` and `switchboard notify`). */
  get sink(): NotifySink {
    if (!this.sink_) throw new Error('job service used before the core attached it');
    return this.sink_;
  }

  /** The job service attached to a core, if any. */
  static of(core: Core): JobService | undefined {
    return byCore.get(core);
  }

  attach(core: Core): void {
    this.core_ = core;
    byCore.set(core, this);
    core.jobs = this;
    this.log_ = core.log.child({ part: 'jobs' });
    this.sink_ = new NotifySink(core);
    this.metrics = createJobMetrics(core.metrics.registry);
    core.addChannel(new JobChannel(this, core.config.jobs.approval_timeout_seconds));
    for (const tool of this.tools()) core.registry.register(tool);
    this.scheduler = new Scheduler(
      {
        freeSlots: () => Math.max(0, core.config.jobs.concurrency - this.inFlight.size),
        earliestDue: async () => earliestDue(core.db, await this.served()),
        runDue: (now, limit) => this.runDue(now, limit),
        onError: (err) => this.log.error({ err }, 'scheduler pass failed'),
      },
      this.clock,
      core.config.jobs.resync_seconds * 1000,
    );
  }

  /** `schedule_job`, `list_jobs`, `cancel_job`, `notify`, bound to this service. */
  tools(): AnyTool[] {
    return jobTools(this);
  }

  async start(): Promise<void> {
    this.startedAt = this.clock.now();
    await this.recover();
    this.scheduler?.start();
  }

  async stop(): Promise<void> {
    await this.scheduler?.stop();
    this.questionTimers.clear();
  }

  /** Re-read the schedule now. */
  wake(): void {
    this.scheduler?.wake();
  }

  /** Sleep lengths of the scheduler loop (tests check it sleeps instead of polling). */
  get sleeps(): readonly number[] {
    return this.scheduler?.sleeps ?? [];
  }

  /** Runs going in this process. */
  get running(): number {
    return this.inFlight.size;
  }

  /** Whether this process serves a conversation (its channel is here and takes it). */
  private servesConversation(conv: Conversation): boolean {
    const channel = this.core.listChannels().find((c) => c.name === conv.channel);
    return channel !== undefined && channel.name !== JOB_CHANNEL && (channel.serves?.(conv) ?? true);
  }

  /** The jobs this process may run: those reporting to conversations it serves. */
  private async served(): Promise<ServedFilter> {
    const channels: string[] = [];
    const conversations: string[] = [];
    for (const channel of this.core.listChannels()) {
      if (channel.name === JOB_CHANNEL) continue;
      if (!channel.serves) {
        channels.push(channel.name);
        continue;
      }
      const serves = channel.serves.bind(channel);
      for (const conv of await jobReportConversations(this.core.db, channel.name)) {
        if (serves(conv)) conversations.push(conv.id);
      }
    }
    return { channels, conversations };
  }

  /** Channels whose conversations this process serves (jobs reporting there run here). */
  private servedChannels(): string[] {
    return this.core
      .listChannels()
      .map((c) => c.name)
      .filter((n) => n !== JOB_CHANNEL);
  }

  // ---- claiming and starting runs -----------------------------------------------------------

  private async runDue(now: number, limit: number): Promise<number> {
    const { db, config } = this.core;
    const due = await dueOccurrences(db, await this.served(), now, limit);
    let started = 0;
    for (const occurrence of due) {
      if (started >= limit) break;
      const plan = planOccurrence(occurrence, now, this.startedAt, {
        missed: config.jobs.missed,
        missedGraceMs: config.jobs.missed_grace_seconds * 1000,
      });
      const job = occurrence.job;
      const message = runMessage(job, plan);
      const outcome = await claimOccurrence(db, { ...plan, due: occurrence, claimedBy: this.instance, message });
      this.log.info({ jobId: job.id, scheduledAt: plan.scheduledAt, trigger: plan.trigger, outcome }, 'job occurrence');
      if (outcome === 'skipped') this.metrics?.occurrences.inc({ outcome: 'skipped' });
      if (outcome !== 'claimed') continue;
      started++;
      // An occurrence is claimed once across instances (the conditional advance of its job row).
      this.core.metrics.leaseClaims.inc({ kind: 'job' });
      this.metrics?.occurrences.inc({ outcome: 'started' });
      if (plan.trigger !== 'manual') this.metrics?.startDelay.observe(Math.max(0, plan.lateMs) / 1000);
      this.inFlight.add(job.id);
      this.metrics?.running.set(this.inFlight.size);
      this.core.runHere(jobConversationId(job.id));
    }
    return due.length;
  }

  // ---- events of job conversations ----------------------------------------------------------

  async onJobEvent(jobId: string, event: CoreEvent): Promise<void> {
    try {
      await this.handleJobEvent(jobId, event);
    } catch (err) {
      this.log.warn({ err, jobId, event: event.type }, 'job event failed');
    }
  }

  private async handleJobEvent(jobId: string, event: CoreEvent): Promise<void> {
    // Only deltas and tool lines are frequent; they matter to nobody here.
    if (
      event.type === 'delta' ||
      event.type === 'tool_output' ||
      event.type === 'tool_started' ||
      event.type === 'tool_finished'
    )
      return;
    // Another process may expire this run's approval (sweeps are global); the serving one acts.
    if (!(await this.reportsHere(jobId))) return;
    switch (event.type) {
      case 'approval_requested':
      case 'approval_resolved':
      case 'question':
      case 'question_resolved':
      case 'attachment': {
        const job = await getJob(this.core.db, jobId);
        if (!job) return;
        // Platform chats show the copy kept in the ledger; terminals print the forwarded event.
        if (event.type === 'approval_requested' || event.type === 'approval_resolved')
          await mirrorApproval(this.core.db, event.id, job.report_conversation_id, job.name);
        if (event.type === 'question' || event.type === 'question_resolved')
          await mirrorQuestion(this.core.db, event.id, job.report_conversation_id, job.name);
        const labelled = 'label' in event && event.label ? { ...event, label: `[${job.name}] ${event.label}` } : event;
        const forwarded =
          event.type === 'question' ? { ...event, question: `[${job.name}] ${event.question}` } : labelled;
        this.core.emit(job.report_conversation_id, forwarded as CoreEvent);
        if (event.type === 'question')
          this.questionTimers.arm(event.id, jobId, Date.now() + this.core.config.jobs.approval_timeout_seconds * 1000);
        if (event.type === 'question_resolved') this.questionTimers.disarm(event.id);
        if (event.type === 'approval_resolved' && event.decision === 'expired') {
          await this.timeOut(jobId, `the approval of ${event.label ?? 'a tool call'}`);
        }
        return;
      }
      case 'turn_done':
        await this.finish(jobId);
        return;
      default:
        return;
    }
  }

  async reportsHere(jobId: string): Promise<boolean> {
    const job = await getJob(this.core.db, jobId);
    const conv = job && (await this.core.getConversation(job.report_conversation_id));
    return conv !== undefined && this.servesConversation(conv);
  }

  async sendJobFile(jobId: string, file: OutboundFile): Promise<void> {
    const job = await getJob(this.core.db, jobId);
    const conv = job && (await this.core.getConversation(job.report_conversation_id));
    const channel = conv && this.core.listChannels().find((c) => c.name === conv.channel);
    if (!conv || !(channel?.surface || channel?.eventSurface))
      throw new Error('the chat this job reports to cannot receive files');
    // Through the presenter (a surface's ledger) of the reporting chat, keyed by the file and this run.
    const run = await runningRunOf(this.core.db, jobId);
    await this.core.presenter.sendFile(conv, `job:${jobId}:${run?.scheduled_at ?? Date.now()}`, file);
  }

  // ---- timeouts ---------------------------------------------------------------------------

  private async questionExpired(questionId: string, jobId: string): Promise<void> {
    const q = await getQuestion(this.core.db, questionId);
    if (q?.status !== 'pending') return;
    await this.timeOut(jobId, `the question “${q.question}”`);
  }

  /** Stop a run that waited too long for a person; its report says so. */
  private async timeOut(jobId: string, what: string): Promise<void> {
    const run = await runningRunOf(this.core.db, jobId);
    if (!run) return;
    const wait = formatDuration(this.core.config.jobs.approval_timeout_seconds * 1000);
    await setRunDetail(
      this.core.db,
      jobId,
      run.scheduled_at,
      `${TIMED_OUT}no answer to ${what} within ${wait}; the run was stopped`,
    );
    await this.core.stopConversation(jobConversationId(jobId), TIMEOUT_ACTOR);
  }

  // ---- finishing runs ---------------------------------------------------------------------

  /** Record the outcome of a job's run whose turn ended, and report it. Idempotent. */
  private async finish(jobId: string): Promise<void> {
    const { db } = this.core;
    const run = await runningRunOf(db, jobId);
    if (!run) {
      this.release(jobId);
      return;
    }
    const conversationId = jobConversationId(jobId);
    // The queue first, then the turn: a turn starts by consuming the queue in one commit, so a
    // turn starting between the two reads is seen by the second (the other order misses it).
    if ((await pendingInbox(db, conversationId)).length > 0) {
      // The prompt is still queued (the turn has not begun): not finished.
      return;
    }
    if (await activeTurn(db, conversationId)) return;
    const turn = await lastTurnOutcome(db, conversationId);
    const timedOut = run.detail?.startsWith(TIMED_OUT) ?? false;
    const status = timedOut
      ? 'timed_out'
      : turn?.status === 'done'
        ? 'done'
        : turn?.status === 'cancelled'
          ? 'cancelled'
          : 'failed';
    const detail = timedOut
      ? (run.detail as string).slice(TIMED_OUT.length)
      : status === 'failed'
        ? (turn?.error ?? 'the run ended without a reply')
        : status === 'cancelled'
          ? 'stopped'
          : null;
    const job = await getJob(db, jobId);
    const report = job ? reportOf(job, run, status, detail, turn?.reply ?? null) : null;
    // The outcome and its report are written together: a crash leaves both or neither.
    let queued = false;
    const finished = await db.transaction().execute(async (trx) => {
      if (!(await finishRun(trx, run, status, detail))) return false;
      if (job && report) queued = await this.sink.record(trx, job.report_conversation_id, report);
      return true;
    });
    if (finished) this.metrics?.occurrences.inc({ outcome: status });
    if (queued && job && report) this.sink.announce(job.report_conversation_id, report);
    this.release(jobId);
  }

  private release(jobId: string): void {
    if (!this.inFlight.delete(jobId)) return;
    this.metrics?.running.set(this.inFlight.size);
    this.wake();
  }

  // ---- recovery -----------------------------------------------------------------------------

  /** Finish runs whose turn ended while down; count the rest as in flight; re-arm question timeouts. */
  private async recover(): Promise<void> {
    const { db } = this.core;
    for (const run of await runningRuns(db)) {
      // A run reporting to a chat this process does not serve is another process's to finish.
      if (!(await this.reportsHere(run.job_id))) continue;
      this.inFlight.add(run.job_id);
      await this.finish(run.job_id).catch((err) =>
        this.log.warn({ err, jobId: run.job_id }, 'recovering a run failed'),
      );
    }
    for (const q of await pendingJobQuestions(db)) {
      this.questionTimers.arm(
        q.id,
        q.conversation_id.slice(JOB_CHANNEL.length + 1),
        q.created_at + this.core.config.jobs.approval_timeout_seconds * 1000,
      );
    }
  }

  // ---- what tools, commands and the CLI use ------------------------------------------------

  /** Apply a list button or command; stops a deleted job's run and wakes the scheduler. */
  async act(jobId: string, op: JobOp, by: string): Promise<JobActionResult> {
    const result = await applyJobAction(this.core.db, jobId, op, by, await this.core.isAdmin(by));
    if (result.ok && op === 'delete' && (await runningRunOf(this.core.db, jobId))) {
      await this.core.stopConversation(jobConversationId(jobId), by);
    }
    if (result.ok) this.wake();
    return result;
  }

  /** Jobs `by` may act on: their own; an admin sees everyone's. */
  async list(by: string): Promise<Job[]> {
    return listJobs(this.core.db, (await this.core.isAdmin(by)) ? undefined : by);
  }

  /** Make a chat the home chat of `by`. */
  async setHome(by: string, address: FullChatRef): Promise<void> {
    await setHomeChat(this.core.db, by, address);
  }

  /**
   * Where a notification for `principal` from `conversationId` goes: the user's home chat, else
   * the chat the job reports to (for a job run), else the conversation itself.
   */
  async notifyTarget(principal: string, conversationId: string): Promise<string> {
    const home = await homeChatOf(this.core.db, principal);
    if (home && this.serves(home)) return this.sink.conversationFor(home);
    return this.reportConversationOf(conversationId);
  }

  /** The conversation a turn's output belongs to: for a job run, the one the job reports to. */
  async reportConversationOf(conversationId: string): Promise<string> {
    return (await this.jobOf(conversationId))?.report_conversation_id ?? conversationId;
  }

  /** The job whose run a conversation is, if it is one. */
  async jobOf(conversationId: string): Promise<Job | undefined> {
    if (!conversationId.startsWith(`${JOB_CHANNEL}:`)) return undefined;
    return getJob(this.core.db, conversationId.slice(JOB_CHANNEL.length + 1));
  }

  private serves(address: FullChatRef): boolean {
    return this.servedChannels().includes(address.channel);
  }

  /** The core this service runs in. */
  get host(): Core {
    return this.core;
  }
}
