/**
 * Reloads a dashboard page whose script never started. Every page sends `ready` as its script's first act
 * (webview/main.ts); a page that has not said so a while after it was loaded while visible is stuck on the HTML
 * shell's "Loading ShardLens…" (code-server, which serves webviews from the workbench's origin, can leave a page's
 * script request unanswered when two webviews start at once). Loading the page again is what the shell tells the user
 * to do by hand (close and reopen the view); the watch does it for them, a bounded number of times, and says so in
 * the ShardLens output. Pure: no vscode import, so it is tested with mock timers (test/unit/extension/bootWatch.test.ts).
 */

/** What the watch needs from the webview it watches. */
export interface BootTarget {
  /** Whether the page is on screen (a hidden page's script does not run, so it is not waited for). */
  readonly visible: () => boolean;
  /** Loads the page again (assigns its HTML with a fresh nonce). */
  readonly reload: () => void;
  /** Writes a line to the ShardLens output. */
  readonly log: (level: 'warn' | 'error', line: string) => void;
}

/** Milliseconds a visible page has to say `ready` before it is loaded again. */
export const BOOT_WAIT_MS = 8_000;
/** Reloads of one page before the watch gives up and leaves the shell's message to the user. */
export const BOOT_RELOADS = 2;

export class BootWatch {
  private timer: ReturnType<typeof setTimeout> | undefined;
  private waiting = false;
  private reloads = 0;
  private disposed = false;

  constructor(private readonly target: BootTarget, private readonly what: string, private readonly waitMs = BOOT_WAIT_MS) {}

  /** The page is being loaded (attached, its HTML assigned, or shown again after being hidden): wait for its `ready`. */
  loading(): void {
    if (this.disposed) return;
    this.waiting = true;
    this.arm();
  }

  /** The page's script started. */
  ready(): void {
    this.waiting = false;
    this.reloads = 0;
    this.clear();
  }

  /** The page became visible or hidden. A page shown while still waiting gets the full wait from now. */
  visibilityChanged(): void {
    if (this.waiting) this.arm();
  }

  dispose(): void {
    this.disposed = true;
    this.clear();
  }

  private arm(): void {
    this.clear();
    this.timer = setTimeout(() => this.expired(), this.waitMs);
  }

  private clear(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private expired(): void {
    this.timer = undefined;
    if (this.disposed || !this.waiting || !this.target.visible()) return;
    const seconds = this.waitMs / 1000;
    if (this.reloads >= BOOT_RELOADS) {
      this.waiting = false;
      this.target.log('error', `The ${this.what} did not start after ${this.reloads} reloads; close the view and open it again, or run "Developer: Reload Window".`);
      return;
    }
    this.reloads++;
    this.target.log('warn', `The ${this.what} had not started ${seconds} s after it was shown; loading it again (${this.reloads} of ${BOOT_RELOADS}).`);
    this.target.reload();
    this.loading();
  }
}
