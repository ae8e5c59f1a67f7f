/**
 * The admin surface the client needs: InstanceAdmin (create/get/list/delete instances and configs),
 * DatabaseAdmin (create/get/list/drop databases, UpdateDatabaseDdl, GetDatabaseDdl) and the
 * long-running Operations service. Operations complete before the call returns (done = true).
 */
import { randomBytes } from 'node:crypto';
import type * as grpc from '@grpc/grpc-js';
import type { EmulatedDatabase } from './database';
import { toTimestamp, unary } from './grpc-util';
import { Code, SpannerError } from './hooks';
import { type Services, serializeWith } from './protos';
import type { EmulatorState, InstanceState } from './state';
import type { Dialect } from './tokenizer';

interface OperationJson {
  name: string;
  done: boolean;
  response?: { typeUrl: string; value: Buffer };
  error?: { code: number; message: string };
}

/** Completed operations by name. */
const operations = new Map<string, OperationJson>();

function operation(parent: string, typeUrl: string, value: Buffer, error?: SpannerError): OperationJson {
  const name = `${parent}/operations/${randomBytes(8).toString('hex')}`;
  const op: OperationJson = error
    ? { name, done: true, error: { code: error.code, message: error.message } }
    : { name, done: true, response: { typeUrl: `type.googleapis.com/${typeUrl}`, value } };
  operations.set(name, op);
  return op;
}

function instanceMessage(i: InstanceState) {
  return {
    name: i.name,
    config: i.config,
    displayName: i.displayName,
    nodeCount: i.nodeCount,
    processingUnits: i.processingUnits,
    state: 'READY',
    createTime: toTimestamp(i.createNs),
    edition: 'STANDARD',
  };
}

function databaseMessage(db: EmulatedDatabase) {
  return {
    name: db.name,
    state: 'READY',
    createTime: toTimestamp(db.createNs),
    versionRetentionPeriod: db.schema.options.get('version_retention_period') ?? '1h',
    earliestVersionTime: toTimestamp(db.earliestVersionNs()),
    databaseDialect: db.dialect,
  };
}

function databaseId(statement: string): string {
  const m = /^\s*CREATE\s+DATABASE\s+[`"]?([^`"\s]+)[`"]?\s*$/i.exec(statement);
  if (!m) throw new SpannerError(Code.INVALID_ARGUMENT, `Invalid CREATE DATABASE statement: ${statement}`);
  return m[1] as string;
}

/** InstanceAdmin handlers. */
export function instanceAdminHandlers(
  state: EmulatorState,
  services: Services,
): grpc.UntypedServiceImplementation {
  const f = state.faults;
  const get = (name: string) => {
    const i = state.instances.get(name);
    if (!i) throw new SpannerError(Code.NOT_FOUND, `Instance not found: ${name}`);
    return i;
  };
  return {
    CreateInstance: unary(
      f,
      'CreateInstance',
      (req: {
        parent: string;
        instanceId: string;
        instance?: { config?: string; displayName?: string; nodeCount?: number };
      }) => {
        const i = state.createInstance(
          `${req.parent}/instances/${req.instanceId}`,
          req.instance?.config,
          req.instance?.displayName,
          req.instance?.nodeCount || 1,
        );
        const msg = instanceMessage(i);
        return operation(
          i.name,
          'google.spanner.admin.instance.v1.Instance',
          serializeWith(services.instanceAdmin, 'GetInstance', msg),
        );
      },
    ),
    GetInstance: unary(f, 'GetInstance', (req: { name: string }) => instanceMessage(get(req.name))),
    ListInstances: unary(f, 'ListInstances', (req: { parent: string }) => ({
      instances: [...state.instances.values()]
        .filter((i) => i.name.startsWith(`${req.parent}/`))
        .map(instanceMessage),
    })),
    DeleteInstance: unary(f, 'DeleteInstance', (req: { name: string }) => {
      get(req.name);
      state.deleteInstance(req.name);
      return {};
    }),
    GetInstanceConfig: unary(f, 'GetInstanceConfig', (req: { name: string }) => ({
      name: req.name,
      displayName: req.name.split('/').pop(),
    })),
    ListInstanceConfigs: unary(f, 'ListInstanceConfigs', (req: { parent: string }) => ({
      instanceConfigs: [{ name: `${req.parent}/instanceConfigs/emulator-config`, displayName: 'Emulator' }],
    })),
  };
}

/** DatabaseAdmin handlers. */
export function databaseAdminHandlers(
  state: EmulatorState,
  services: Services,
): grpc.UntypedServiceImplementation {
  const f = state.faults;
  return {
    CreateDatabase: unary(
      f,
      'CreateDatabase',
      (req: {
        parent: string;
        createStatement: string;
        extraStatements?: string[];
        databaseDialect?: string;
        protoDescriptors?: Buffer;
      }) => {
        const dialect: Dialect = req.databaseDialect === 'POSTGRESQL' ? 'POSTGRESQL' : 'GOOGLE_STANDARD_SQL';
        const name = `${req.parent}/databases/${databaseId(req.createStatement)}`;
        const db = state.createDatabase(name, dialect);
        try {
          db.updateDdl(req.extraStatements ?? [], undefined, req.protoDescriptors);
        } catch (err) {
          state.dropDatabase(name);
          throw err;
        }
        const value = serializeWith(services.databaseAdmin, 'GetDatabase', databaseMessage(db));
        return operation(name, 'google.spanner.admin.database.v1.Database', value);
      },
    ),
    GetDatabase: unary(f, 'GetDatabase', (req: { name: string }) =>
      databaseMessage(state.database(req.name)),
    ),
    ListDatabases: unary(f, 'ListDatabases', (req: { parent: string }) => ({
      databases: [...state.databases.values()]
        .filter((d) => d.name.startsWith(`${req.parent}/`))
        .map(databaseMessage),
    })),
    DropDatabase: unary(f, 'DropDatabase', (req: { database: string }) => {
      state.database(req.database);
      state.dropDatabase(req.database);
      return {};
    }),
    UpdateDatabaseDdl: unary(
      f,
      'UpdateDatabaseDdl',
      (req: { database: string; statements?: string[]; protoDescriptors?: Buffer }) => {
        const db = state.database(req.database);
        const statements = req.statements ?? [];
        let applied = 0;
        try {
          for (const s of statements) {
            db.updateDdl([s], undefined, req.protoDescriptors);
            applied++;
          }
        } catch (err) {
          if (applied === 0 || !(err instanceof SpannerError)) throw err;
          return operation(db.name, 'google.protobuf.Empty', Buffer.alloc(0), err);
        }
        return operation(db.name, 'google.protobuf.Empty', Buffer.alloc(0));
      },
    ),
    GetDatabaseDdl: unary(f, 'GetDatabaseDdl', (req: { database: string }) => {
      const db = state.database(req.database);
      const bundle = db.schema.protoBundle;
      return { statements: db.ddl(), ...(bundle ? { protoDescriptors: bundle.descriptorBytes() } : {}) };
    }),
  };
}

/** google.longrunning.Operations handlers. */
export function operationsHandlers(state: EmulatorState): grpc.UntypedServiceImplementation {
  const f = state.faults;
  return {
    GetOperation: unary(f, 'GetOperation', (req: { name: string }) => {
      const op = operations.get(req.name);
      if (!op) throw new SpannerError(Code.NOT_FOUND, `Operation not found: ${req.name}`);
      return op;
    }),
    ListOperations: unary(f, 'ListOperations', (req: { name: string }) => ({
      operations: [...operations.values()].filter((o) => o.name.startsWith(req.name)),
    })),
    CancelOperation: unary(f, 'CancelOperation', () => ({})),
    DeleteOperation: unary(f, 'DeleteOperation', (req: { name: string }) => {
      operations.delete(req.name);
      return {};
    }),
  };
}
