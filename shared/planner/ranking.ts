/**
 * The two collections the search keeps while it runs: the K fastest fitting layouts and the Pareto front of
 * peak memory against step time. Both decide from two numbers before any layout object is built.
 */

/** Keeps the K entries with the smallest (key, tie) pairs, sorted ascending; full ties keep the earlier entry. */
export class TopK<T> {
  private readonly keys: number[] = [];
  private readonly ties: number[] = [];
  private readonly items: T[] = [];
  constructor(private readonly k: number) {}

  private before(key: number, tie: number, i: number): boolean {
    return key < this.keys[i] || (key === this.keys[i] && tie < this.ties[i]);
  }

  /** True when an entry with this key (and tie-breaker) would be kept. */
  accepts(key: number, tie = 0): boolean {
    return this.k > 0 && (this.keys.length < this.k || this.before(key, tie, this.keys.length - 1));
  }

  add(key: number, item: T, tie = 0): void {
    if (!this.accepts(key, tie)) return;
    let i = this.keys.length;
    while (i > 0 && this.before(key, tie, i - 1)) i--;
    this.keys.splice(i, 0, key);
    this.ties.splice(i, 0, tie);
    this.items.splice(i, 0, item);
    if (this.keys.length > this.k) {
      this.keys.pop();
      this.ties.pop();
      this.items.pop();
    }
  }

  values(): T[] {
    return [...this.items];
  }
}

/**
 * Points (memory, time) that no other point beats in both, sorted by ascending memory (so time strictly descends).
 * A point is dominated when another has memory ≤ and time ≤ with one of them strictly smaller.
 */
export class ParetoFront<T> {
  private readonly mem: number[] = [];
  private readonly time: number[] = [];
  private readonly items: T[] = [];

  /** Index of the first point with memory > m. */
  private upper(m: number): number {
    let lo = 0;
    let hi = this.mem.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.mem[mid] <= m) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** True when the point would join the front. */
  accepts(m: number, t: number): boolean {
    const i = this.upper(m);
    // The point left of i has the largest memory ≤ m and so the smallest time among those.
    return i === 0 || this.time[i - 1] > t;
  }

  add(m: number, t: number, item: T): void {
    if (!this.accepts(m, t)) return;
    let i = this.upper(m);
    // Equal memory and slower time: the new point replaces it.
    while (i > 0 && this.mem[i - 1] === m) i--;
    let j = i;
    while (j < this.mem.length && this.time[j] >= t) j++;
    this.mem.splice(i, j - i, m);
    this.time.splice(i, j - i, t);
    this.items.splice(i, j - i, item);
  }

  values(): T[] {
    return [...this.items];
  }
}
