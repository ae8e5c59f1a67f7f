/**
 * The proto bundle of the local stack's real-data tables (GoogleSQL): one message and one enum, compiled with
 * protobufjs into the FileDescriptorSet that `CREATE PROTO BUNDLE` needs, and encoders for their values in
 * Spanner's wire form (a PROTO as its serialized bytes in base64, an ENUM as its number in text).
 */
import * as protobuf from 'protobufjs';
import { FileDescriptorSet } from 'protobufjs/ext/descriptor';

const PACKAGE = 'sluice.realdata';

/** The message type's fully qualified name. */
export const PROTO_MESSAGE = `${PACKAGE}.Payload`;
/** The enum type's fully qualified name. */
export const PROTO_ENUM = `${PACKAGE}.Level`;

/** The schema; version 2 adds a field, as a schema evolution would (`ALTER PROTO BUNDLE UPDATE`). */
const source = (version: 1 | 2) => `syntax = "proto3";
package ${PACKAGE};
enum Level { LEVEL_UNSPECIFIED = 0; LOW = 1; HIGH = 2; TOP = 2147483647; BOTTOM = -2147483648; }
message Payload {
  int64 id = 1;
  string label = 2;
  Level level = 3;
  bytes blob = 4;
  repeated sint64 counts = 5;
  message Part { string name = 1; double weight = 2; }
  repeated Part parts = 6;
  ${version === 2 ? 'string note = 7;' : ''}
}`;

const compiled = new Map<1 | 2, { payload: protobuf.Type; descriptors: Buffer }>();

function compile(version: 1 | 2 = 1): { payload: protobuf.Type; descriptors: Buffer } {
  const done = compiled.get(version);
  if (done) return done;
  const root = protobuf.parse(source(version), { keepCase: true }).root;
  const set = (root as unknown as { toDescriptor(syntax: string): protobuf.Message }).toDescriptor('proto3');
  for (const f of (set as unknown as { file: Array<{ name?: string }> }).file)
    f.name = 'sluice/realdata.proto';
  const out = {
    payload: root.lookupType(PROTO_MESSAGE),
    descriptors: Buffer.from(FileDescriptorSet.encode(set).finish()),
  };
  compiled.set(version, out);
  return out;
}

/** The serialized FileDescriptorSet sent as `proto_descriptors` (of the schema's first or second version). */
export function protoDescriptors(version: 1 | 2 = 1): Buffer {
  return compile(version).descriptors;
}

/** The statement creating the bundle (before any table that uses its types). */
export const PROTO_BUNDLE_DDL = `CREATE PROTO BUNDLE (${PROTO_MESSAGE}, ${PROTO_ENUM})`;

/** One Payload message's fields (protobufjs plain-object form). */
export interface PayloadFields {
  id?: string;
  label?: string;
  level?: number;
  blob?: Uint8Array;
  counts?: string[];
  parts?: Array<{ name?: string; weight?: number }>;
}

/** A Payload serialized and base64-encoded, as a PROTO value travels. */
export function encodePayload(fields: PayloadFields): string {
  const { payload } = compile();
  return Buffer.from(payload.encode(payload.fromObject(fields)).finish()).toString('base64');
}

/** The enum's numbers, extremes included. */
export const LEVELS = [0, 1, 2, 2147483647, -2147483648];
