/**
 * The lineage graph the local Data Lineage API emulator received, for the terminal. By default one summary
 * line that says where the edges are (the emulator's admin `GET /edges`, or `npm start -- --lineage`): one
 * line per column edge pushed the ready line and the console URL off the screen (ADR-2205). With `--lineage`
 * every column-level edge follows it, `source → target`, names as the service records them
 * (`<namespace>:<name>.<column>`).
 */
import type { ReceivedEdge } from './emulators/lineage/emulator';
import type { LocalStack } from './stack';

/**
 * The summary line (`lineage: 53 column edges — …`), then the edges when `all` is set.
 * `adminUrl` is the lineage emulator's admin endpoint, which serves the edges as JSON.
 */
export function lineageLines(
  events: number,
  edges: ReceivedEdge[],
  options: { all?: boolean; adminUrl?: string } = {},
): string[] {
  const where = options.all
    ? 'listed below'
    : `npm start -- --lineage lists them${options.adminUrl ? `, or GET ${options.adminUrl}/edges` : ''}`;
  const heading =
    events === 0
      ? 'lineage: no run event received yet'
      : `lineage: ${edges.length} column edge${edges.length === 1 ? '' : 's'} from ${events} run event${events === 1 ? '' : 's'} — ${where}`;
  return [heading, ...(options.all ? edges.map((e) => `  ${e.source} → ${e.target}`) : [])];
}

/** Waits (up to `timeoutMs`) for the emulator's first lineage event, then prints the summary (and edges). */
export async function printLineage(
  stack: Pick<LocalStack, 'emulators' | 'ready'>,
  print: (line: string) => void,
  options: { all?: boolean; timeoutMs?: number } = {},
): Promise<void> {
  const admin = stack.emulators.lineage.admin;
  await admin.waitFor(() => admin.events().length > 0, options.timeoutMs ?? 10_000).catch(() => undefined);
  const lines = lineageLines(admin.events().length, admin.edges(), {
    ...(options.all ? { all: true } : {}),
    adminUrl: stack.ready.lineage.adminUrl,
  });
  for (const line of lines) print(line);
}
