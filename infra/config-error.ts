/** The error a bad stack configuration raises at preview: every bad field, with its full config key. */

/** One bad field: the stack config key path (e.g. `sluice:functions.reader.memory`) and the rule it broke. */
export interface ConfigIssue {
  path: string;
  message: string;
}

/** Raised by the settings builder; Pulumi prints the message, which names every bad field. */
export class StackConfigError extends Error {
  /** Every bad field, in the order found. */
  readonly issues: readonly ConfigIssue[];

  constructor(issues: readonly ConfigIssue[]) {
    super(
      `invalid stack configuration (${issues.length} problem${issues.length === 1 ? '' : 's'}):\n` +
        issues.map((i) => `  - ${i.path}: ${i.message}`).join('\n'),
    );
    this.name = 'StackConfigError';
    this.issues = issues;
  }
}

/** Issue shape produced by zod (kept structural so no zod type leaks into callers). */
interface ZodLikeIssue {
  path: readonly PropertyKey[];
  message: string;
  /** Set on unknown-key issues: the keys themselves, which belong in the path. */
  keys?: readonly string[];
}

/** Turns zod issues of a namespace's keys into issues with full config paths (`sluice:key.a.b`). */
export function issuesAt(namespace: string, issues: readonly ZodLikeIssue[]): ConfigIssue[] {
  return issues.map((i) => ({
    path: `${namespace}:${[...i.path.map((p) => String(p)), ...(i.keys ?? [])].join('.')}`,
    message: i.message,
  }));
}
