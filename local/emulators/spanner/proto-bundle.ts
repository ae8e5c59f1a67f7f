/**
 * A database's proto bundle: the message and enum types its PROTO / ENUM columns may use, chosen by
 * `CREATE / ALTER PROTO BUNDLE` from the `FileDescriptorSet` the DDL request carries (`proto_descriptors`).
 * Only the listed types are known, as the service does; the descriptors of their files are kept so
 * GetDatabaseDdl can hand them back. Messages are never decoded: a PROTO value is its serialized bytes.
 */
import { FileDescriptorSet } from 'protobufjs/ext/descriptor';
import { Code, SpannerError } from './hooks';

/** Whether a name is a message or an enum type. */
export type ProtoKind = 'PROTO' | 'ENUM';

interface FileDescriptor {
  name?: string;
  package?: string;
  messageType?: MessageDescriptor[];
  enumType?: Array<{ name?: string }>;
}

interface MessageDescriptor {
  name?: string;
  nestedType?: MessageDescriptor[];
  enumType?: Array<{ name?: string }>;
}

/** The types a FileDescriptorSet defines: fully qualified name → kind and defining file. */
interface DescriptorIndex {
  files: Map<string, FileDescriptor>;
  types: Map<string, { kind: ProtoKind; file: string }>;
}

function invalid(message: string): never {
  throw new SpannerError(Code.INVALID_ARGUMENT, message);
}

function indexMessages(
  prefix: string,
  file: string,
  messages: MessageDescriptor[],
  out: DescriptorIndex['types'],
): void {
  for (const m of messages) {
    const fqn = `${prefix}${m.name ?? ''}`;
    out.set(fqn, { kind: 'PROTO', file });
    for (const e of m.enumType ?? []) out.set(`${fqn}.${e.name ?? ''}`, { kind: 'ENUM', file });
    indexMessages(`${fqn}.`, file, m.nestedType ?? [], out);
  }
}

/** Parses `proto_descriptors` (a serialized google.protobuf.FileDescriptorSet), as the service checks it. */
export function parseDescriptorSet(bytes: Uint8Array | undefined): DescriptorIndex {
  if (!bytes || bytes.length === 0) invalid('Contents of proto_descriptor_file cannot be empty');
  let files: FileDescriptor[];
  try {
    files = (FileDescriptorSet.decode(bytes) as unknown as { file?: FileDescriptor[] }).file ?? [];
  } catch {
    return invalid('Could not parse contents of proto_descriptor_file');
  }
  const index: DescriptorIndex = { files: new Map(), types: new Map() };
  for (const f of files) {
    const name = f.name ?? '';
    if (index.files.has(name))
      invalid(
        `Could not add FileDescriptor of \`${name}\` into the protodb: the file descriptor already exists in the protodb.`,
      );
    index.files.set(name, f);
    const prefix = f.package ? `${f.package}.` : '';
    for (const e of f.enumType ?? [])
      index.types.set(`${prefix}${e.name ?? ''}`, { kind: 'ENUM', file: name });
    indexMessages(prefix, name, f.messageType ?? [], index.types);
  }
  return index;
}

/** An immutable proto bundle (each CREATE / ALTER builds a new one, so earlier schema versions keep theirs). */
export class ProtoBundle {
  private constructor(
    /** The listed types, sorted as the service prints them. */
    readonly types: ReadonlyMap<string, ProtoKind>,
    private readonly index: DescriptorIndex,
  ) {}

  /** The kind of a listed type, or undefined. */
  kind(fqn: string): ProtoKind | undefined {
    return this.types.get(fqn);
  }

  /** GetDatabaseDdl's `proto_descriptors`: the files defining the listed types, by file name. */
  descriptorBytes(): Buffer {
    const names = [...new Set([...this.types.keys()].map((t) => this.index.types.get(t)?.file ?? ''))].sort();
    const file = names.map((n) => this.index.files.get(n));
    return Buffer.from(FileDescriptorSet.encode(FileDescriptorSet.create({ file })).finish());
  }

  /**
   * The bundle after `CREATE PROTO BUNDLE` (no `previous`) or `ALTER PROTO BUNDLE`, with the service's
   * errors: a type missing from the descriptors, inserted twice, or updated / deleted while not listed.
   */
  static build(
    descriptors: Uint8Array | undefined,
    change: { insert: string[]; update: string[]; delete: string[] },
    previous?: ProtoBundle,
  ): ProtoBundle {
    const index = parseDescriptorSet(descriptors);
    const listed = new Set(previous ? previous.types.keys() : []);
    const described = (t: string) => {
      if (!index.types.has(t)) throw new SpannerError(Code.NOT_FOUND, `Missing descriptor for \`${t}\``);
    };
    for (const t of listed) described(t);
    for (const t of change.insert) {
      described(t);
      if (listed.has(t))
        throw new SpannerError(Code.ALREADY_EXISTS, `Type already exists: \`${t}\` the proto bundle`);
      listed.add(t);
    }
    for (const t of change.update) {
      if (!listed.has(t))
        throw new SpannerError(Code.NOT_FOUND, `Tried to update \`${t}\` which does not already exist.`);
      described(t);
    }
    for (const t of change.delete)
      if (!listed.delete(t))
        throw new SpannerError(
          Code.NOT_FOUND,
          `Tried to remove \`${t}\` which does not already exist in the proto bundle.`,
        );
    for (const t of listed)
      if (t.startsWith('spanner.') || t.startsWith('tech.spanner.'))
        throw new SpannerError(
          Code.FAILED_PRECONDITION,
          `Message \`${t}\` has reserved package \`${t.startsWith('spanner.') ? 'spanner' : 'tech.spanner'}\`.`,
        );
    const types = new Map([...listed].sort().map((t) => [t, index.types.get(t)?.kind as ProtoKind]));
    return new ProtoBundle(types, index);
  }
}
