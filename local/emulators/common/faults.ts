/**
 * Fault injection shared by every emulator: rules are added through an emulator's admin handle (or its
 * admin HTTP endpoint) and consumed by the request path, so tests never patch client internals.
 */

/** One rule. `method` names the call (a gRPC method such as `ExecuteStreamingSql`, or an HTTP route key). */
export interface FaultRule {
  method: string;
  /** How many matching calls the rule applies to; `Infinity` for all until cleared. */
  times: number;
  /** gRPC status code (number) or HTTP status to answer with. */
  code?: number;
  message?: string;
  /** Added latency before the call is answered (or before the fault applies). */
  delayMs?: number;
  /** For streams: let this many items (rows, records, requests) through, then end with `code`. */
  afterItems?: number;
  /** Drop the connection instead of answering. */
  drop?: boolean;
  /**
   * For streams of per-item results that take effect on the server (Spanner BatchWrite): the items after the
   * first `afterItems` still take effect, but their results are lost with the broken stream.
   */
  applyAfterBreak?: boolean;
  /**
   * For streams of per-item results (Spanner BatchWrite): only these items (0-based positions in the
   * request) fail, each with `code`, and the stream goes on.
   */
  items?: number[];
  /**
   * Only calls whose subject contains this (an emulator says what the subject is, e.g. the BigQuery
   * emulator's AppendRows: the write stream name). Calls with no subject never match a targeted rule.
   */
  target?: string;
  /**
   * For unary calls: answer normally but leave these top-level fields out of the response (a service that
   * does not report them, e.g. BigQuery's FinalizeWriteStream `rowCount`).
   */
  omit?: string[];
}

/** A rule as stored, with its id and how often it fired. */
export interface ActiveFault extends FaultRule {
  id: number;
  fired: number;
}

/** Ordered set of fault rules; the first live rule matching a method wins. */
export class FaultInjector {
  private rules: ActiveFault[] = [];
  private nextId = 1;

  /** Adds a rule and returns its id. */
  add(rule: FaultRule): number {
    const id = this.nextId++;
    this.rules.push({ ...rule, times: rule.times ?? 1, id, fired: 0 });
    return id;
  }

  /**
   * Takes the next matching rule for `method` (and `subject`), counting it as fired; undefined when none
   * applies. `item` is the call's position in its stream (e.g. the requests a BigQuery append connection
   * answered so far): taken with one, a rule with `afterItems` matches only from that position on.
   */
  take(method: string, subject?: string, item?: number): ActiveFault | undefined {
    const rule = this.rules.find(
      (r) =>
        r.fired < r.times &&
        (r.method === method || r.method === '*') &&
        (r.target === undefined || (subject !== undefined && subject.includes(r.target))) &&
        (item === undefined || r.afterItems === undefined || item >= r.afterItems),
    );
    if (rule) rule.fired++;
    return rule;
  }

  /** Removes one rule, or all when no id is given. */
  clear(id?: number): void {
    this.rules = id === undefined ? [] : this.rules.filter((r) => r.id !== id);
  }

  /** Every rule, including spent ones (for inspection). */
  list(): ActiveFault[] {
    return this.rules.map((r) => ({ ...r }));
  }
}

/** Resolves after `ms` milliseconds (no timer when 0). */
export function sleep(ms: number): Promise<void> {
  return ms > 0 ? new Promise((resolve) => setTimeout(resolve, ms)) : Promise.resolve();
}
