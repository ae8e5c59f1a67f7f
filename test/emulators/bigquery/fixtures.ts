/**
 * Test fixtures shared by the emulator's own tests: a table schema with every supported type and helpers
 * around the official clients.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { adapt, managedwriter, protos } from '@google-cloud/bigquery-storage';
import type { BigQueryEmulator } from '../../../local/emulators/bigquery/emulator';
import type { ProbeResult, ProbeStep } from './rest-probe';

/** Nullable columns of the given types, in the order given. */
const nullable = (types: Record<string, string>) =>
  Object.entries(types).map(([name, type]) => ({ name, type }));

/** REST schema covering every type the emulator stores. */
export const ALL_TYPES_SCHEMA = [
  { name: 'id', type: 'INTEGER', mode: 'REQUIRED' },
  ...nullable({ name: 'STRING', score: 'FLOAT', active: 'BOOLEAN', payload: 'BYTES' }),
  ...nullable({ ts: 'TIMESTAMP', day: 'DATE', clock: 'TIME', local: 'DATETIME' }),
  ...nullable({ amount: 'NUMERIC', big: 'BIGNUMERIC', place: 'GEOGRAPHY', doc: 'JSON' }),
  { name: 'tags', type: 'STRING', mode: 'REPEATED' },
  { name: 'meta', type: 'RECORD', fields: nullable({ k: 'STRING', n: 'INTEGER' }) },
];

/** The table most write tests write to: a required integer `id` and a nullable `name`. */
export const ID_NAME_SCHEMA = [
  { name: 'id', type: 'INTEGER', mode: 'REQUIRED' },
  ...nullable({ name: 'STRING' }),
];

/** Creates a table through `@google-cloud/bigquery` and returns its Storage Write table path. */
export async function createWriteTable(
  emulator: BigQueryEmulator,
  datasetId: string,
  tableId: string,
  schema: unknown[] = ID_NAME_SCHEMA,
): Promise<string> {
  ok(
    (
      await bigQueryCalls(emulator, [
        { op: 'createTable', dataset: datasetId, table: tableId, options: { schema } },
      ])
    )[0],
  );
  return tablePath(emulator, datasetId, tableId);
}

/** The Storage Write table path of a table. */
export function tablePath(emulator: BigQueryEmulator, datasetId: string, tableId: string): string {
  return `projects/${emulator.projectId}/datasets/${datasetId}/tables/${tableId}`;
}

/** Which CDC pseudocolumns a descriptor carries: none, `_CHANGE_TYPE` only, or both. */
export type CdcColumns = false | 'type' | 'full';

/** Proto descriptor for a table, as an application builds it from GetWriteStream FULL. */
export async function descriptorFor(
  client: managedwriter.WriterClient,
  destinationTable: string,
  cdc: CdcColumns = false,
): Promise<ReturnType<typeof adapt.convertStorageSchemaToProto2Descriptor>> {
  const stream = await client.getWriteStream({
    streamId: `${destinationTable}/streams/_default`,
    view: protos.google.cloud.bigquery.storage.v1.WriteStreamView.FULL,
  });
  const opts = cdc
    ? [adapt.withChangeType(), ...(cdc === 'full' ? [adapt.withChangeSequenceNumber()] : [])]
    : [];
  return adapt.convertStorageSchemaToProto2Descriptor(stream.tableSchema!, 'root', ...opts);
}

/** A JSONWriter on the default stream with an error listener (so connection errors never crash the test). */
export async function defaultJsonWriter(
  client: managedwriter.WriterClient,
  destinationTable: string,
  cdc: CdcColumns = false,
): Promise<{
  writer: managedwriter.JSONWriter;
  connection: Awaited<ReturnType<managedwriter.WriterClient['createStreamConnection']>>;
  errors: Error[];
}> {
  const protoDescriptor = await descriptorFor(client, destinationTable, cdc);
  const connection = await client.createStreamConnection({
    streamId: managedwriter.DefaultStream,
    destinationTable,
  });
  const errors: Error[] = [];
  connection.onConnectionError((e) => errors.push(e));
  return { writer: new managedwriter.JSONWriter({ connection, protoDescriptor }), connection, errors };
}

/**
 * Runs `@google-cloud/bigquery` calls in a child Node process (see rest-probe.ts) and returns the outcomes.
 * `viaEnv` points the client at the emulator with BIGQUERY_EMULATOR_HOST instead of `apiEndpoint`.
 */
export function bigQueryCalls(
  emulator: BigQueryEmulator,
  steps: ProbeStep[],
  viaEnv = false,
): Promise<ProbeResult[]> {
  const input = { projectId: emulator.projectId, steps, ...(viaEnv ? {} : { restUrl: emulator.restUrl }) };
  const { BIGQUERY_EMULATOR_HOST: _unset, ...inherited } = process.env;
  const env: NodeJS.ProcessEnv = { ...inherited, METADATA_SERVER_DETECTION: 'none' };
  if (viaEnv) env.BIGQUERY_EMULATOR_HOST = `${emulator.restUrl}/bigquery/v2`;
  const args = [
    '--require',
    require.resolve('tsx/cjs'),
    join(__dirname, 'rest-probe.ts'),
    JSON.stringify(input),
  ];
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      args,
      { env, timeout: 30_000, maxBuffer: 64 * 1024 * 1024 },
      (err, stdout, stderr) => {
        if (err) reject(new Error(`${err.message}\n${stderr}`));
        else resolve(JSON.parse(stdout) as ProbeResult[]);
      },
    );
  });
}

/** The value of a successful outcome; throws with the error otherwise. */
export function ok<T = unknown>(result: ProbeResult | undefined): T {
  if (!result || !('ok' in result)) throw new Error(`call failed: ${JSON.stringify(result)}`);
  return result.ok as T;
}
