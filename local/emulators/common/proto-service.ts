/**
 * Loads a Google service definition from the protos shipped in the official client's package (imports
 * resolved from `google-gax`'s common protos), so an emulator serves exactly the wire surface the client was
 * generated from.
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
const LOADER_OPTIONS = { keepCase: false, longs: String, enums: String, defaults: false, oneofs: true };

/**
 * The service `servicePath` (e.g. `google.cloud.tasks.v2.CloudTasks`) of `protoFile`, from the protos of the
 * client package `clientPackage`.
 */
export function googleService(
  clientPackage: string,
  protoFile: string,
  servicePath: string,
): ServiceDefinition {
  const definition = loadSync(protoFile, {
    ...LOADER_OPTIONS,
    includeDirs: [
      join(packageRoot(clientPackage), 'build', 'protos'),
      join(packageRoot('google-gax'), 'build', 'protos'),
    ],
  });
  let node: unknown = loadPackageDefinition(definition);
  for (const part of servicePath.split('.')) node = (node as Record<string, unknown> | undefined)?.[part];
  const service = (node as { service?: ServiceDefinition } | undefined)?.service;
  if (!service) throw new Error(`service ${servicePath} not found in ${protoFile}`);
  return service;
}
