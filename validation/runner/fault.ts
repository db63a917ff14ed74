/**
 * Test hooks for the crash and out-of-memory paths: SHARDLENS_VALIDATION_FAULT=exit ends the runner without a
 * report, =oom exhausts its heap, =worker makes rank 0 throw in its first step, =stall makes rank 0 never start its backend. Unset in normal use.
 */
export type Fault = 'exit' | 'oom' | 'worker' | 'stall' | undefined;

export function faultFromEnv(): Fault {
  const f = process.env.SHARDLENS_VALIDATION_FAULT;
  return f === 'exit' || f === 'oom' || f === 'worker' || f === 'stall' ? f : undefined;
}

/** Runs the runner-side faults (exit, oom); returns without effect otherwise. */
export function injectRunnerFault(f: Fault): void {
  if (f === 'exit') process.exit(3);
  if (f === 'oom') {
    const hog: number[][] = [];
    for (;;) hog.push(new Array<number>(1 << 20).fill(Math.random()));
  }
}
