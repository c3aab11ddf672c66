/**
 * Keeping the head and the tail of a large output in bounded memory: the first half of the
 * budget is kept as it arrives, the last half as a rolling window; the middle is counted.
 */

/** Bounded head+tail capture of a byte stream. */
export class HeadTail {
  private head: Buffer[] = [];
  private headLen = 0;
  private tail: Buffer[] = [];
  private tailLen = 0;
  /** Bytes seen in all. */
  total = 0;

  /** @param maxBytes total budget; half for the head, half for the tail. */
  constructor(private readonly maxBytes: number) {}

  push(chunk: Buffer): void {
    this.total += chunk.length;
    const headRoom = Math.floor(this.maxBytes / 2) - this.headLen;
    if (headRoom > 0) {
      const take = chunk.subarray(0, headRoom);
      this.head.push(Buffer.from(take));
      this.headLen += take.length;
      chunk = chunk.subarray(take.length);
      if (chunk.length === 0) return;
    }
    this.tail.push(Buffer.from(chunk));
    this.tailLen += chunk.length;
    const tailMax = this.maxBytes - Math.floor(this.maxBytes / 2);
    while (this.tailLen - (this.tail[0]?.length ?? 0) >= tailMax) {
      this.tailLen -= (this.tail.shift() as Buffer).length;
    }
  }

  /** Bytes dropped from the middle. */
  get omitted(): number {
    return Math.max(0, this.total - this.maxBytes);
  }

  /** The kept text, with a notice in place of the omitted middle (cut at line boundaries). */
  text(): string {
    const head = Buffer.concat(this.head).toString('utf8');
    let tailBuf = Buffer.concat(this.tail);
    if (this.omitted === 0) return head + tailBuf.toString('utf8');
    const tailMax = this.maxBytes - Math.floor(this.maxBytes / 2);
    tailBuf = tailBuf.subarray(Math.max(0, tailBuf.length - tailMax));
    let tail = tailBuf.toString('utf8');
    const nl = tail.indexOf('\n');
    if (nl !== -1 && nl < 200) tail = tail.slice(nl + 1); // start the tail on a whole line
    const headCut = head.lastIndexOf('\n');
    const headText = headCut > head.length - 200 ? head.slice(0, headCut + 1) : head;
    return `${headText}\n[... ${this.omitted} bytes of output omitted; ${this.total} bytes in all ...]\n${tail}`;
  }
}
