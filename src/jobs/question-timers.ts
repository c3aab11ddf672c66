/**
 * Deadlines of questions asked by job runs. An approval expires through its row (`expires_at`,
 * swept by the core); a question has no expiry of its own, so the job service keeps a timer per
 * open question (re-armed from the database at start-up).
 */

/** One timer per open question; `onExpire` runs when a deadline passes. */
export class QuestionTimers {
  private readonly timers = new Map<string, NodeJS.Timeout>();

  constructor(private readonly onExpire: (questionId: string, jobId: string) => Promise<void> | void) {}

  /** Expire `questionId` at `deadline` (epoch ms); a second arm of the same question is ignored. */
  arm(questionId: string, jobId: string, deadline: number): void {
    if (this.timers.has(questionId)) return;
    const timer = setTimeout(
      () => {
        this.timers.delete(questionId);
        void this.onExpire(questionId, jobId);
      },
      Math.max(0, deadline - Date.now()),
    );
    timer.unref();
    this.timers.set(questionId, timer);
  }

  /** The question was answered or closed. */
  disarm(questionId: string): void {
    const t = this.timers.get(questionId);
    if (t) clearTimeout(t);
    this.timers.delete(questionId);
  }

  /** Drop every timer (shutdown). */
  clear(): void {
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
  }
}
