/**
 * Process groups ShardLens started (torchrun with its ranks, the validation runner with its probes). Each is killed
 * as a group on every way ShardLens ends: cancel, timeout, a normal end with stragglers, an error, and the exit of
 * this process itself (an `exit` hook, which also runs after an uncaught error). A SIGKILL of this process runs no
 * hook: then the launched side's own watchdog (probe/watchdog.py) notices that its parent is gone.
 */
import { readdirSync } from 'node:fs';
import { readTextFile } from '../server/io/read';

const live = new Set<number>();
let hooked = false;

function send(target: number, sig: NodeJS.Signals): void {
  try {
    process.kill(target, sig);
  } catch {
    // Already gone, or not a group leader.
  }
}

/**
 * Processes below `pid`, from /proc (Linux). torchrun starts every rank in a session of its own, so killing the
 * launcher's group alone would leave the ranks running until their watchdog notices.
 */
export function descendants(pid: number): number[] {
  if (process.platform !== 'linux') return [];
  const parent = new Map<number, number>();
  let names: string[];
  try {
    names = readdirSync('/proc').filter((n) => /^\d+$/.test(n)).slice(0, 100_000);
  } catch {
    return [];
  }
  for (const n of names) {
    const stat = readTextFile(`/proc/${n}/stat`, { maxBytes: 4096 });
    if (!stat.ok) continue;
    // "pid (command) state ppid …": the command may hold spaces and parentheses, so read after the last ")".
    const ppid = Number(stat.text.slice(stat.text.lastIndexOf(')') + 2).split(' ')[1]);
    if (Number.isInteger(ppid)) parent.set(Number(n), ppid);
  }
  const out: number[] = [];
  const queue = [pid];
  for (let head = 0; head < queue.length; head++) {
    for (const [child, p] of parent) if (p === queue[head] && !out.includes(child)) { out.push(child); queue.push(child); }
  }
  return out;
}

/** Sends `sig` to the group led by `pid` and to every process below it (POSIX), or to the process (Windows). */
export function signalGroup(pid: number | undefined, sig: NodeJS.Signals): void {
  if (!pid) return;
  if (process.platform === 'win32') return send(pid, sig);
  const below = descendants(pid);
  send(-pid, sig);
  for (const d of below) {
    send(-d, sig);
    send(d, sig);
  }
}

/** Remembers a group until `release`; it is killed if this process exits first. */
export function trackGroup(pid: number | undefined): void {
  if (!pid) return;
  live.add(pid);
  if (!hooked) {
    hooked = true;
    process.on('exit', () => { for (const g of live) signalGroup(g, 'SIGKILL'); });
  }
}

/** Kills what is left of a group whose leader has exited, and forgets it. */
export function releaseGroup(pid: number | undefined): void {
  if (!pid) return;
  signalGroup(pid, 'SIGKILL');
  live.delete(pid);
}

/** Groups still running (tests). */
export function liveGroups(): number[] {
  return [...live];
}
