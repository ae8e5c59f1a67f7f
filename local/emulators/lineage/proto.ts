/**
 * Loads `google.cloud.datacatalog.lineage.v1.Lineage` from the protos shipped in `@google-cloud/lineage`
 * (imports resolved from `google-gax`'s common protos), so the emulator serves the wire surface the official
 * client was generated from.
 */
import { join } from 'node:path';
import { loadPackageDefinition, type ServiceDefinition } from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { packageRoot } from '../tasks/proto';

/** Conversion options: int64 as strings, enums as names, oneof discriminators set. */
const LOADER_OPTIONS = { keepCase: false, longs: String, enums: String, defaults: false, oneofs: true };

/** The Lineage service as a grpc-js service definition. */
export function lineageService(): ServiceDefinition {
  const definition = loadSync('google/cloud/datacatalog/lineage/v1/lineage.proto', {
    ...LOADER_OPTIONS,
    includeDirs: [
      join(packageRoot('@google-cloud/lineage'), 'build', 'protos'),
      join(packageRoot('google-gax'), 'build', 'protos'),
    ],
  });
  const root = loadPackageDefinition(definition) as unknown as {
    google: {
      cloud: { datacatalog: { lineage: { v1: { Lineage: { service: ServiceDefinition } } } } };
    };
  };
  return root.google.cloud.datacatalog.lineage.v1.Lineage.service;
}
