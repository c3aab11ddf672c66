/**
 * Whether the write that just claimed a row still fences the platform call about to be made, so
 * the call needs no confirming write of its own. A claim write (taking the row, or a stream's
 * claim) checks in the database that the row is this holder's and extends it by a whole claim
 * lifetime, exactly as the confirm before a post does. When the call follows it before control
 * has gone back to the event loop (only promise steps ran in between: no I/O, no timer), and
 * soon, nothing can have happened meanwhile that a confirm would see: another instance takes a
 * row only once its claim has run out or its holder is dead, and this process was running. A
 * sender that stalled between its claim and its call (an awaited look-up, a starved process)
 * has let the event loop turn, and confirms in the database as before.
 */

/** One fencing write of a claim, good for the one platform call that follows it at once. */
export class FreshClaim {
  private fresh = false;
  private at = 0;
  /** Ends the freshness at the check phase after the write (the event loop has turned by then). */
  private readonly expire = () => {
    this.fresh = false;
  };

  /**
   * @param maxAgeMs how long after the write it still fences a call (well inside the claim's
   * lifetime; the presenter renews claims every third of it)
   */
  constructor(private readonly maxAgeMs: number) {}

  /** The claim was just written in the database (taken, or confirmed and extended). */
  written(now = Date.now()): void {
    this.fresh = true;
    this.at = now;
    setImmediate(this.expire);
  }

  /**
   * Whether the last write fences a call made now: same event loop turn, and recent. Either way
   * it is used up, so each platform call after the first confirms in the database as before.
   */
  take(now = Date.now()): boolean {
    const fresh = this.fresh && now - this.at < this.maxAgeMs;
    this.fresh = false;
    return fresh;
  }
}
