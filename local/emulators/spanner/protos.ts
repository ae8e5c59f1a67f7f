/**
 * Loads the gRPC service definitions the emulator serves from the protos shipped in npm packages.
 */
import { dirname, join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';

/** Service definitions by short name. */
export interface Services {
  spanner: grpc.ServiceDefinition;
  instanceAdmin: grpc.ServiceDefinition;
  databaseAdmin: grpc.ServiceDefinition;
  operations: grpc.ServiceDefinition;
}

let cached: Services | undefined;

function lookup(root: grpc.GrpcObject, path: string): grpc.ServiceDefinition {
  let node: unknown = root;
  for (const part of path.split('.')) node = (node as Record<string, unknown>)[part];
  return (node as { service: grpc.ServiceDefinition }).service;
}

/** Loads (once) and returns the service definitions. */
export function loadServices(): Services {
  if (cached) return cached;
  const apiRoot = join(dirname(require.resolve('@google-cloud/spanner-api/package.json')), 'build', 'protos');
  const gaxRoot = join(dirname(require.resolve('google-gax')), '..', 'protos');
  const def = protoLoader.loadSync(
    [
      'google/spanner/v1/spanner.proto',
      'google/spanner/admin/instance/v1/spanner_instance_admin.proto',
      'google/spanner/admin/database/v1/spanner_database_admin.proto',
      'google/longrunning/operations.proto',
    ],
    {
      keepCase: false,
      longs: String,
      enums: String,
      defaults: false,
      oneofs: true,
      includeDirs: [apiRoot, gaxRoot],
    },
  );
  const root = grpc.loadPackageDefinition(def);
  cached = {
    spanner: lookup(root, 'google.spanner.v1.Spanner'),
    instanceAdmin: lookup(root, 'google.spanner.admin.instance.v1.InstanceAdmin'),
    databaseAdmin: lookup(root, 'google.spanner.admin.database.v1.DatabaseAdmin'),
    operations: lookup(root, 'google.longrunning.Operations'),
  };
  return cached;
}

/** Serializes a message with the response serializer of a method whose response has that type. */
export function serializeWith(service: grpc.ServiceDefinition, method: string, message: unknown): Buffer {
  const m = service[method];
  if (!m) throw new Error(`no method ${method}`);
  return m.responseSerialize(message);
}
