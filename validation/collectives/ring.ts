/**
 * Ring collectives between worker threads over SharedArrayBuffer mailboxes (one per receiving rank, guarded by
 * Atomics.wait/notify). Bytes are counted at the sender, per collective label, as NCCL-style ring algorithms send them:
 * reduce-scatter and all-gather each send (N−1) chunks of size/N per rank (Patarasuk & Yuan 2009).
 */

/** Bytes of the control header in front of each mailbox's data. */
const HEADER_BYTES = 16;
const EMPTY = 0, FULL = 1;

/** Allocates one mailbox per rank, each able to hold `capacity` floats. */
export function createMailboxes(ranks: number, capacity: number): SharedArrayBuffer[] {
  return Array.from({ length: ranks }, () => new SharedArrayBuffer(HEADER_BYTES + 4 * Math.max(1, capacity)));
}

export interface Traffic { sentBytes: number; receivedBytes: number; calls: number }

export class Ring {
  private readonly ctl: Int32Array[];
  private readonly data: Float32Array[];
  /** Traffic per collective label; reset by the caller per step. */
  readonly traffic = new Map<string, Traffic>();
  /** When false, transfers are not counted (used for the final parameter check). */
  counting = true;

  constructor(readonly rank: number, readonly size: number, mailboxes: readonly SharedArrayBuffer[], private readonly timeoutMs = 120_000) {
    this.ctl = mailboxes.map((b) => new Int32Array(b, 0, HEADER_BYTES / 4));
    this.data = mailboxes.map((b) => new Float32Array(b, HEADER_BYTES));
  }

  private count(label: string, sent: number, received: number, call: boolean): void {
    if (!this.counting) return;
    const t = this.traffic.get(label) ?? { sentBytes: 0, receivedBytes: 0, calls: 0 };
    t.sentBytes += sent;
    t.receivedBytes += received;
    if (call) t.calls++;
    this.traffic.set(label, t);
  }

  private waitFor(ctl: Int32Array, want: number): void {
    while (Atomics.load(ctl, 0) !== want) {
      const current = Atomics.load(ctl, 0);
      if (current === want) break;
      if (Atomics.wait(ctl, 0, current, this.timeoutMs) === 'timed-out') throw new Error(`rank ${this.rank}: a peer did not respond within ${this.timeoutMs} ms`);
    }
  }

  /** Sends `src[from, from+len)` to the next rank in the ring. */
  private sendNext(src: Float32Array, from: number, len: number): void {
    const dst = (this.rank + 1) % this.size;
    if (len > this.data[dst].length) throw new Error(`message of ${len} floats exceeds the mailbox (${this.data[dst].length})`);
    this.waitFor(this.ctl[dst], EMPTY);
    this.data[dst].set(src.subarray(from, from + len));
    Atomics.store(this.ctl[dst], 0, FULL);
    Atomics.notify(this.ctl[dst], 0);
  }

  /** Receives from the previous rank into `dst[at, at+len)`, adding to it when `add` is set. */
  private receivePrev(dst: Float32Array, at: number, len: number, add: boolean): void {
    const ctl = this.ctl[this.rank], box = this.data[this.rank];
    this.waitFor(ctl, FULL);
    if (add) for (let i = 0; i < len; i++) dst[at + i] = box[i] + dst[at + i];
    else dst.set(box.subarray(0, len), at);
    Atomics.store(ctl, 0, EMPTY);
    Atomics.notify(ctl, 0);
  }

  private mod(x: number): number {
    return ((x % this.size) + this.size) % this.size;
  }

  /**
   * Ring reduce-scatter of `buf` (length divisible by N) in place: afterwards chunk `rank` of `buf` holds the sum over
   * ranks. Returns a copy of that chunk. Each rank sends N−1 chunks of len/N floats.
   */
  reduceScatter(buf: Float32Array, label: string): Float32Array {
    const n = this.size, c = buf.length / n;
    if (!Number.isInteger(c)) throw new Error('reduce-scatter length must be divisible by the ring size');
    for (let s = 0; s < n - 1; s++) {
      const send = this.mod(this.rank - s - 1), recv = this.mod(this.rank - s - 2);
      this.sendNext(buf, send * c, c);
      this.receivePrev(buf, recv * c, c, true);
      this.count(label, 4 * c, 4 * c, false);
    }
    this.count(label, 0, 0, true);
    return buf.slice(this.rank * c, (this.rank + 1) * c);
  }

  /** Ring all-gather: every rank contributes chunk `rank`; returns the full vector of N chunks. */
  allGather(shard: Float32Array, label: string): Float32Array {
    const n = this.size, c = shard.length, out = new Float32Array(c * n);
    out.set(shard, this.rank * c);
    for (let s = 0; s < n - 1; s++) {
      const send = this.mod(this.rank - s), recv = this.mod(this.rank - s - 1);
      this.sendNext(out, send * c, c);
      this.receivePrev(out, recv * c, c, false);
      this.count(label, 4 * c, 4 * c, false);
    }
    this.count(label, 0, 0, true);
    return out;
  }

  /** Ring all-reduce as reduce-scatter followed by all-gather; the result replaces nothing and is returned. */
  allReduce(buf: Float32Array, label: string): Float32Array {
    const shard = this.reduceScatter(buf, label);
    return this.allGather(shard, label);
  }
}
