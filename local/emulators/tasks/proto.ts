/**
 * Loads the Cloud Tasks v2 service definition from the protos shipped in `@google-cloud/tasks` (imports
 * resolved from `google-gax`'s common protos), so the emulator serves exactly the wire surface the client
 * was generated from.
 */
import { join, sep } from 'node:path';
import { loadPackageDefinition, type ServiceDefinition } from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';

/** The installed root folder of package `name`, found from its resolved entry point. */
export function packageRoot(name: string): string {
  const entry = require.resolve(name);
  const marker = `${sep}node_modules${sep}${name.split('/').join(sep)}${sep}`;
  const at = entry.lastIndexOf(marker);
  if (at < 0) throw new Error(`cannot locate the package folder of ${name}`);
  return entry.slice(0, at + marker.length);
}

/** Conversion options: int64 as strings, enums as names, oneof discriminators set. */
export const LOADER_OPTIONS = {
  keepCase: false,
  longs: String,
  enums: String,
  defaults: false,
  oneofs: true,
};

/** `google.cloud.tasks.v2.CloudTasks` as a grpc-js service definition. */
export function cloudTasksService(): ServiceDefinition {
  const definition = loadSync('google/cloud/tasks/v2/cloudtasks.proto', {
    ...LOADER_OPTIONS,
    includeDirs: [
      join(packageRoot('@google-cloud/tasks'), 'build', 'protos'),
      join(packageRoot('google-gax'), 'build', 'protos'),
    ],
  });
  const root = loadPackageDefinition(definition) as unknown as {
    google: { cloud: { tasks: { v2: { CloudTasks: { service: ServiceDefinition } } } } };
  };
  return root.google.cloud.tasks.v2.CloudTasks.service;
}
