/**
 * The local stack's four function processes: their ports, the endpoints each is given, and their start,
 * again on fresh ports when another process took a picked one meanwhile.
 */
import { join } from 'node:path';
import type { DemoSchema } from './demo-schema';
import type { LocalEmulators } from './emulators';
import { bundledFunctionHost } from './function-bundle';
import {
  assertFunctionsHealthy,
  type FunctionLogLine,
  type FunctionName,
  FunctionProcess,
} from './function-process';
import { freePort, PortInUseError } from './ports';
import { functionEnvironment, localDeadLetterKey, type StackEndpoints } from './stack-config';

/** What the function start reads of the stack's options (documented on `LocalStackOptions`). */
export interface FunctionStartOptions {
  mode?: 'scheduled' | 'continuous';
  ports?: Partial<Record<FunctionName, number>>;
  functions?: boolean;
  functionEnv?: Record<string, string>;
  dataDir?: string;
  startOnFirstRequest?: FunctionName[];
}

async function functionPorts(ports: FunctionStartOptions['ports']): Promise<Record<FunctionName, number>> {
  return {
    scheduler: ports?.scheduler || (await freePort()),
    reader: ports?.reader || (await freePort()),
    backfill: ports?.backfill || (await freePort()),
    writer: ports?.writer || (await freePort()),
  };
}

function endpointsOf(emulators: LocalEmulators, ports: Record<FunctionName, number>): StackEndpoints {
  return {
    spannerHost: emulators.spanner.address,
    gcsUrl: emulators.gcs.url,
    tasksHost: emulators.tasks.address,
    bigqueryRestUrl: emulators.bigquery.restUrl,
    bigqueryWriteHost: emulators.bigquery.grpcAddress,
    lineageHost: emulators.lineage.address,
    readerUrl: `http://127.0.0.1:${ports.reader}`,
    backfillUrl: `http://127.0.0.1:${ports.backfill}`,
  };
}

/** Attempts at starting the functions on freshly picked ports, when another process took a picked one. */
const PORT_ATTEMPTS = 3;

/**
 * Starts the four functions (unless `options.functions` is false) and fills `functions` with them.
 * A picked port can be taken by another process between the pick and the bind: then every function
 * stops and all start again on new ports (their URLs are in each other's environment). A port the user
 * asked for is not picked again: its `PortInUseError` is thrown.
 */
export async function startFunctions(
  options: FunctionStartOptions,
  schema: DemoSchema,
  emulators: LocalEmulators,
  onLine: (line: FunctionLogLine) => void,
  functions: Partial<Record<FunctionName, FunctionProcess>>,
): Promise<StackEndpoints> {
  for (let attempt = 1; ; attempt++) {
    const ports = await functionPorts(options.ports);
    const endpoints = endpointsOf(emulators, ports);
    if (options.functions === false) return endpoints;
    const env = functionEnvironment(schema, options.mode ?? 'scheduled', endpoints, {
      SLUICE_DEAD_LETTER_KEY: localDeadLetterKey(options.dataDir),
      ...options.functionEnv,
    });
    const root = join(__dirname, '..');
    const bundle = await bundledFunctionHost(root);
    for (const name of ['scheduler', 'reader', 'backfill', 'writer'] as const) {
      functions[name] = new FunctionProcess(name, ports[name], env, onLine, root, bundle);
    }
    const later = new Set(options.startOnFirstRequest ?? []);
    const started = await Promise.allSettled(
      Object.values(functions).map((f) => (later.has(f.name) ? f.startOnFirstRequest() : f.start())),
    );
    const failures = started.flatMap((r) => (r.status === 'rejected' ? [r.reason as unknown] : []));
    if (failures.length === 0) {
      await assertFunctionsHealthy(Object.values(functions).filter((f) => !later.has(f.name)));
      return endpoints;
    }
    await Promise.all(Object.values(functions).map((f) => f.stop()));
    const picked = (e: unknown) => e instanceof PortInUseError && !options.ports?.[e.role as FunctionName];
    if (attempt >= PORT_ATTEMPTS || !failures.every(picked)) throw failures[0];
  }
}
