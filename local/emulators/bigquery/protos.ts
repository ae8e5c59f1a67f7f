/**
 * Loads the BigQueryWrite service definition from the protos shipped in `@google-cloud/bigquery-storage`
 * (common protos from google-gax), so the wire format is exactly the one the client speaks.
 */
import { dirname, join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';

/** Options shared by the loader: camelCase names, enums as strings, 64-bit integers as strings. */
export const LOADER_OPTIONS: protoLoader.Options = {
  keepCase: false,
  longs: String,
  enums: String,
  defaults: false,
  oneofs: true,
};

function protoRoots(): string[] {
  const storage = join(
    dirname(require.resolve('@google-cloud/bigquery-storage/package.json')),
    'build',
    'protos',
  );
  // google-gax does not export its package.json; its entry point lives in build/src.
  const gax = join(dirname(require.resolve('google-gax')), '..', 'protos');
  return [storage, gax];
}

/** The `BigQueryWrite` service definition, ready for `grpc.Server.addService`. */
export function loadWriteService(): grpc.ServiceDefinition {
  const definition = protoLoader.loadSync(
    [
      'google/cloud/bigquery/storage/v1/storage.proto',
      // Loaded so that the `column_name` FieldOptions extension is decoded inside writer descriptors.
      'google/cloud/bigquery/storage/v1/annotations.proto',
    ],
    { ...LOADER_OPTIONS, includeDirs: protoRoots() },
  );
  const pkg = grpc.loadPackageDefinition(definition) as unknown as {
    google: { cloud: { bigquery: { storage: { v1: { BigQueryWrite: grpc.ServiceClientConstructor } } } } };
  };
  return pkg.google.cloud.bigquery.storage.v1.BigQueryWrite.service;
}

/** Serialises a `StorageError` for the `…storageerror-bin` trailer that `parseStorageErrors` reads. */
export function encodeStorageError(code: number, entity: string, message: string): Buffer {
  // Hand-encoded (three fields) to avoid a second protobuf root: 1 varint, 2 string, 3 string.
  const parts: Buffer[] = [Buffer.from([0x08]), varint(code)];
  for (const [tag, text] of [
    [0x12, entity],
    [0x1a, message],
  ] as const) {
    const bytes = Buffer.from(text, 'utf8');
    parts.push(Buffer.from([tag]), varint(bytes.length), bytes);
  }
  return Buffer.concat(parts);
}

function varint(n: number): Buffer {
  const out: number[] = [];
  let v = n;
  while (v > 0x7f) {
    out.push((v & 0x7f) | 0x80);
    v >>>= 7;
  }
  out.push(v);
  return Buffer.from(out);
}

/** Storage error codes (`StorageError.StorageErrorCode`). */
export const StorageErrorCode = {
  TABLE_NOT_FOUND: 1,
  STREAM_ALREADY_COMMITTED: 2,
  STREAM_NOT_FOUND: 3,
  INVALID_STREAM_TYPE: 4,
  INVALID_STREAM_STATE: 5,
  STREAM_FINALIZED: 6,
  SCHEMA_MISMATCH_EXTRA_FIELDS: 7,
  OFFSET_ALREADY_EXISTS: 8,
  OFFSET_OUT_OF_RANGE: 9,
} as const;
