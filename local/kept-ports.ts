/**
 * Ports a data directory keeps across restarts. State restored from `--data-dir` is only half of a restart:
 * clients, scripts and a console configured with the first run's addresses must find the same ones again,
 * so the first start writes the ports it listened on into the directory and every later start asks for
 * them again (ADR-2204). A kept port another process took is an error that names it, never a silent move.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Ports by role (`spanner`, `spanner.admin`, `reader`, …). */
export type PortMap = Record<string, number>;

/** The ports file of `dir` for one tool (`npm run emulators` and `npm start` keep theirs apart). */
export function keptPortsFile(dir: string, tool: 'emulators' | 'stack'): string {
  return join(dir, `${tool}-ports.json`);
}

/** The ports kept in `file`, or undefined before the first start. @throws naming the file when it is bad. */
export function readKeptPorts(file: string): PortMap | undefined {
  if (!existsSync(file)) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new Error(`${file}: not JSON (${(err as Error).message}); delete it to pick new ports`);
  }
  const valid =
    parsed !== null &&
    typeof parsed === 'object' &&
    !Array.isArray(parsed) &&
    Object.values(parsed).every((p) => Number.isInteger(p) && (p as number) > 0 && (p as number) < 65_536);
  if (!valid) throw new Error(`${file}: expected an object of role to port; delete it to pick new ports`);
  return parsed as PortMap;
}

/** Writes the ports a start listened on, for the next start on the same directory. */
export function keepPorts(file: string, ports: PortMap): void {
  mkdirSync(join(file, '..'), { recursive: true });
  writeFileSync(file, `${JSON.stringify(ports, null, 2)}\n`);
}

/** The port of `127.0.0.1:9010` or `http://127.0.0.1:9011`. @throws when there is none. */
export function portOf(address: string): number {
  const m = /:(\d+)\/?$/.exec(address);
  if (!m) throw new Error(`no port in address ${JSON.stringify(address)}`);
  return Number(m[1]);
}

/** `from`, `from + 1`, … for `roles` in order. @throws when the range passes 65535. */
export function consecutivePorts(from: number, roles: readonly string[]): PortMap {
  if (!Number.isInteger(from) || from < 1 || from + roles.length - 1 > 65_535)
    throw new Error(`--ports-from ${from}: needs ${roles.length} consecutive ports within 1–65535`);
  return Object.fromEntries(roles.map((role, i) => [role, from + i]));
}

/** The ports of the local stack by option name (`spanner`, `spannerAdmin`, …, `reader`, `writer`). */
export interface StackListening {
  emulators: {
    spanner: { address: string; adminUrl: string };
    gcs: { url: string; adminUrl?: string | undefined };
    tasks: { address: string; adminUrl?: string | undefined };
    bigquery: { restUrl: string; grpcAddress: string; adminUrl?: string | undefined };
    lineage: { address: string; adminUrl?: string | undefined };
  };
  functions: Record<string, number>;
}

/** Every port a started stack listens on, as the `ports` option names them. */
export function stackPorts(s: StackListening): PortMap {
  const e = s.emulators;
  const addresses: Record<string, string | undefined> = {
    spanner: e.spanner.address,
    spannerAdmin: e.spanner.adminUrl,
    gcs: e.gcs.url,
    gcsAdmin: e.gcs.adminUrl,
    tasks: e.tasks.address,
    tasksAdmin: e.tasks.adminUrl,
    bigqueryRest: e.bigquery.restUrl,
    bigqueryWrite: e.bigquery.grpcAddress,
    bigqueryAdmin: e.bigquery.adminUrl,
    lineage: e.lineage.address,
    lineageAdmin: e.lineage.adminUrl,
  };
  const out: PortMap = { ...s.functions };
  for (const [role, address] of Object.entries(addresses)) if (address) out[role] = portOf(address);
  return out;
}

/**
 * The ports a stack on `dataDir` asks for: those its first start kept, where the caller asked for none
 * (a port flag wins over a kept port). `kept` names the roles that came from the file.
 */
export function withKeptPorts(
  file: string,
  requested: Record<string, number | undefined>,
): { ports: Record<string, number | undefined>; kept: Set<string> } {
  const kept = readKeptPorts(file) ?? {};
  const ports: Record<string, number | undefined> = { ...requested };
  const from = new Set<string>();
  for (const [role, port] of Object.entries(kept)) {
    if (ports[role]) continue;
    ports[role] = port;
    from.add(role);
  }
  return { ports, kept: from };
}
