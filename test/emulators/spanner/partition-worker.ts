/**
 * Runs one query partition in a separate process, as a backfill worker would: reads
 * `{address, database, identifier, partition}` as JSON from argv[2] and prints the rows as JSON.
 */

import { Spanner } from '@google-cloud/spanner';
import * as grpc from '@grpc/grpc-js';

interface Job {
  port: number;
  instance: string;
  database: string;
  identifier: { session: string; transaction: string; timestamp: unknown };
  partition: Record<string, unknown> & { partitionToken: string };
}

async function main(): Promise<void> {
  process.env.METADATA_SERVER_DETECTION = 'none';
  const job = JSON.parse(process.argv[2] ?? '{}') as Job;
  const spanner = new Spanner({
    projectId: 'test-project',
    servicePath: '127.0.0.1',
    port: job.port,
    sslCreds: grpc.credentials.createInsecure(),
  });
  const db = spanner.instance(job.instance).database(job.database);
  const txn = db.batchTransaction(job.identifier as never);
  const [rows] = await txn.execute({
    ...job.partition,
    partitionToken: Buffer.from(job.partition.partitionToken, 'base64'),
  } as never);
  const plain = rows.map((r) =>
    (r as { toJSON(o: unknown): Record<string, { value?: string }> }).toJSON({ wrapNumbers: true }),
  );
  const out = plain.map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, v?.value ?? v])));
  process.stdout.write(JSON.stringify(out));
  await db.close();
  spanner.close();
}

main().catch((err: unknown) => {
  process.stderr.write(String(err));
  process.exit(1);
});
