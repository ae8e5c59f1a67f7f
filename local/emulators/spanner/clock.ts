/**
 * The emulator's clock: "now" in nanoseconds since the epoch (wall clock anchored once, advanced with the
 * monotonic high-resolution timer), and commit timestamps that strictly increase across all databases.
 */

/** Nanosecond clock shared by every database of one emulator. */
export class Clock {
  private readonly wallAtStart = BigInt(Date.now()) * 1_000_000n;
  private readonly hrAtStart = process.hrtime.bigint();
  private lastCommit = 0n;

  /** Current time in ns; never earlier than the last commit timestamp handed out. */
  nowNs(): bigint {
    const now = this.wallAtStart + (process.hrtime.bigint() - this.hrAtStart);
    if (now < this.lastCommit) return this.lastCommit;
    return now;
  }

  /** Notes a commit timestamp handed out before a restart: later ones stay strictly greater. */
  observe(ns: bigint): void {
    if (ns > this.lastCommit) this.lastCommit = ns;
  }

  /** A new commit timestamp, strictly greater than every earlier one. */
  nextCommitNs(): bigint {
    const now = this.nowNs();
    this.lastCommit = now > this.lastCommit ? now : this.lastCommit + 1n;
    return this.lastCommit;
  }
}

/** Parses a Spanner duration option such as `1h`, `7d`, `90m`, `3600s`, into ns. */
export function parseRetention(text: string): bigint {
  const m = /^(\d+)([smhd])$/.exec(text.trim());
  if (!m) throw new Error(`invalid duration ${text}`);
  const unit = { s: 1n, m: 60n, h: 3600n, d: 86400n }[m[2] as 's' | 'm' | 'h' | 'd'];
  return BigInt(m[1] as string) * unit * 1_000_000_000n;
}
