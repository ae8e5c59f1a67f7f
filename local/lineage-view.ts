/**
 * The lineage graph the local Data Lineage API emulator received, for the terminal: one line per
 * column-level edge, `source → target`, names as the service records them (`<namespace>:<name>.<column>`).
 */
import type { ReceivedEdge } from './emulators/lineage/emulator';
import type { LocalStack } from './stack';

/** The lines that show `edges` (a heading, then one line per edge). */
export function lineageLines(events: number, edges: ReceivedEdge[]): string[] {
  return [
    `lineage: ${events} run event(s) received, ${edges.length} column edge(s)`,
    ...edges.map((e) => `  ${e.source} → ${e.target}`),
  ];
}

/** Waits (up to `timeoutMs`) for the emulator's first lineage event, then prints the graph, a line each. */
export async function printLineage(
  stack: Pick<LocalStack, 'emulators'>,
  print: (line: string) => void,
  timeoutMs = 10_000,
): Promise<void> {
  const admin = stack.emulators.lineage.admin;
  await admin.waitFor(() => admin.events().length > 0, timeoutMs).catch(() => undefined);
  for (const line of lineageLines(admin.events().length, admin.edges())) print(line);
}
