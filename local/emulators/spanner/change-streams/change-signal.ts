/**
 * "Something changed" notifications inside one engine. Commits, churn and DDL wake the running change-stream
 * queries so they re-check their partition at once instead of waiting out their poll interval.
 */
export class ChangeSignal {
  private readonly listeners = new Set<() => void>();

  /** Wakes every current listener. */
  notify(): void {
    // A copy: a woken query may unsubscribe (or subscribe again) while the listeners are being called.
    for (const listener of [...this.listeners]) listener();
  }

  /** Subscribes `listener`; returns the unsubscribe function. Bound, so it can be handed out as a value. */
  readonly onChange = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };
}
