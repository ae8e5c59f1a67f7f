/**
 * The row encoder writes the wire format itself: what it writes must decode, through protobufjs and the
 * descriptor BigQuery's client derives from a table schema, to exactly the values given — every type, at
 * its extremes, in lists, under placeholder names — and equal protobufjs's own encoding of the same row.
 */
import { adapt, protos } from '@google-cloud/bigquery-storage';
import { Type } from 'protobufjs';
import {
  CdcRows,
  type JsonRow,
  RowEncoder,
  rowAt,
  UnknownFieldError,
} from '../../../shared/adapters/bigquery/row-encoder';

type Mode = 'NULLABLE' | 'REPEATED' | 'REQUIRED';
const T = protos.google.cloud.bigquery.storage.v1.TableFieldSchema;

function field(name: string, type: keyof typeof T.Type, mode: Mode = 'NULLABLE') {
  return { name, type: T.Type[type], mode: T.Mode[mode] };
}

const SCHEMA = {
  fields: [
    field('Id', 'INT64', 'REQUIRED'),
    field('Name', 'STRING'),
    field('Price', 'DOUBLE'),
    field('Active', 'BOOL'),
    field('Amount', 'NUMERIC'),
    field('Born', 'DATE'),
    field('UpdatedAt', 'TIMESTAMP'),
    field('Raw', 'BYTES'),
    field('Doc', 'JSON'),
    field('Tags', 'STRING', 'REPEATED'),
    field('Nums', 'INT64', 'REPEATED'),
    field('Flags', 'BOOL', 'REPEATED'),
    field('Ratios', 'DOUBLE', 'REPEATED'),
    field('Blobs', 'BYTES', 'REPEATED'),
    field('Ünïcode name', 'STRING'),
  ],
};

function descriptorOf(cdc: boolean) {
  return cdc
    ? adapt.convertStorageSchemaToProto2Descriptor(
        SCHEMA,
        'root',
        adapt.withChangeType(),
        adapt.withChangeSequenceNumber(),
      )
    : adapt.convertStorageSchemaToProto2Descriptor(SCHEMA, 'root');
}

function typeOf(descriptor: ReturnType<typeof descriptorOf>): Type {
  return Type.fromDescriptor(
    adapt.normalizeDescriptor(new protos.google.protobuf.DescriptorProto(descriptor)),
  );
}

function decode(type: Type, bytes: Uint8Array): Record<string, unknown> {
  return type.toObject(type.decode(bytes), { longs: String, bytes: String, defaults: false });
}

const INT64_MIN = '-9223372036854775808';
const INT64_MAX = '9223372036854775807';

const ROWS: JsonRow[] = [
  {
    Id: INT64_MAX,
    Name: 'a ✓ 😀 text',
    Price: Number.MAX_VALUE,
    Active: true,
    Amount: '99999999999999999999999999999.999999999',
    Born: -719162,
    UpdatedAt: '253402300799999999',
    Raw: Buffer.from([0, 255, 1, 254]).toString('base64'),
    Doc: '{"a":[1,2,{"b":null}]}',
    Tags: ['', 'x'.repeat(200), 'ü'.repeat(60)],
    Nums: [INT64_MIN, INT64_MAX, '0', '-1', '4294967296', '-4294967297', 9007199254740991, -9007199254740991],
    Flags: [true, false],
    Ratios: [0, -0, Number.MIN_VALUE, -1.5, Number.POSITIVE_INFINITY],
    Blobs: ['', Buffer.from('x'.repeat(300)).toString('base64')],
    'Ünïcode name': 'value',
  },
  {
    Id: INT64_MIN,
    Name: null,
    Price: Number.NaN,
    Active: false,
    Born: 2932896,
    UpdatedAt: '-62135596800000000',
  },
  { Id: '0', Name: '', Tags: [], Nums: [], Price: -0, UpdatedAt: 0 },
  { Id: -1, Name: 'y'.repeat(70_000), Amount: 12.5, Born: '19000' },
  { Id: '123456789012345', UpdatedAt: 1_700_000_000_000_000, Nums: [-2147483649, 2147483648] },
];

/** What the values above mean once decoded (protobufjs's view: 64-bit integers as decimal text). */
function expected(row: JsonRow): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(row)) {
    if (value === null || (Array.isArray(value) && value.length === 0)) continue;
    const key = /^[A-Za-z_]\w*$/.test(name) ? name : Object.keys(typeOf(descriptorOf(false)).fields).at(-1)!;
    if (['Id', 'UpdatedAt'].includes(name)) out[key] = String(value);
    else if (name === 'Nums') out[key] = (value as Array<string | number>).map(String);
    else if (name === 'Amount') out[key] = String(value);
    else if (name === 'Born') out[key] = Number(value);
    else out[key] = value;
  }
  return out;
}

describe.each([false, true])('row encoder (CDC columns: %s)', (cdc) => {
  const descriptor = descriptorOf(cdc);
  const type = typeOf(descriptor);
  const encoder = new RowEncoder(descriptor);

  it.each(ROWS.map((r, i) => [i, r] as const))('row %i decodes to exactly its values', (_i, row) => {
    const withCdc: JsonRow = cdc ? { ...row, _CHANGE_TYPE: 'UPSERT', _CHANGE_SEQUENCE_NUMBER: 'A/B' } : row;
    const [bytes] = encoder.encode([withCdc]);
    const got = decode(type, bytes!);
    const want = expected(row);
    if (cdc) Object.assign(want, { _CHANGE_TYPE: 'UPSERT', _CHANGE_SEQUENCE_NUMBER: 'A/B' });
    // NaN is not equal to itself under toEqual's rules only by identity: compare it apart.
    if (Number.isNaN(row.Price)) {
      expect(Number.isNaN(got.Price)).toBe(true);
      delete got.Price;
      delete want.Price;
    }
    expect(got).toEqual(want);
  });

  it('writes what protobufjs writes for the same message', () => {
    const row = ROWS[0]!;
    const [bytes] = encoder.encode([row]);
    const decoded = type.decode(bytes!);
    // Re-encoding the decoded message with protobufjs gives the same bytes: same fields, same wire types.
    expect(Buffer.from(type.encode(decoded).finish()).equals(Buffer.from(bytes!))).toBe(true);
  });

  it('encodes 20,000 rows one after another without mixing them', () => {
    const rows: JsonRow[] = Array.from({ length: 20_000 }, (_, i) => ({
      Id: String(BigInt(i) * 922_337_203_685_477n - 9_223_372_036_854_775_807n),
      Name: `row ${i}`,
      Tags: i % 3 === 0 ? [] : [`t${i}`],
    }));
    const encoded = encoder.encode(rows);
    expect(encoded).toHaveLength(rows.length);
    for (let i = 0; i < rows.length; i += 997) {
      const got = decode(type, encoded[i]!);
      expect(got.Id).toBe(rows[i]!.Id);
      expect(got.Name).toBe(`row ${i}`);
    }
  });
});

describe('row encoder: CDC columns written beside the row', () => {
  const descriptor = descriptorOf(true);
  const encoder = new RowEncoder(descriptor);

  it('writes the same bytes as the row copied with its pseudo-columns, for upserts and deletes', () => {
    const changes = ROWS.map((row, i) => ({
      kind: i % 2 === 0 ? ('upsert' as const) : ('delete' as const),
      row,
      sequence: `${i.toString(16).padStart(16, '0')}/0/0`,
    }));
    const beside = encoder.encode(new CdcRows(changes));
    const copied = encoder.encode(changes.map((_, i) => rowAt(new CdcRows(changes), i) as JsonRow));
    expect(beside).toHaveLength(ROWS.length);
    for (let i = 0; i < ROWS.length; i++)
      expect(Buffer.from(beside[i]!).equals(Buffer.from(copied[i]!))).toBe(true);
    const got = decode(typeOf(descriptor), beside[1]!);
    expect(got).toMatchObject({ _CHANGE_TYPE: 'DELETE', _CHANGE_SEQUENCE_NUMBER: '0000000000000001/0/0' });
  });

  it('names a row with its pseudo-columns, and leaves the change untouched', () => {
    const row: JsonRow = { Id: '1' };
    const rows = new CdcRows([{ kind: 'upsert', row, sequence: 'S' }]);
    expect(rowAt(rows, 0)).toEqual({ Id: '1', _CHANGE_TYPE: 'UPSERT', _CHANGE_SEQUENCE_NUMBER: 'S' });
    expect(rowAt(rows, 1)).toBeUndefined();
    expect(row).toEqual({ Id: '1' });
  });
});

describe('row encoder: BYTES from base64 text', () => {
  const descriptor = descriptorOf(false);
  const type = typeOf(descriptor);
  const encoder = new RowEncoder(descriptor);

  it.each([
    ['empty', ''],
    ['padded', Buffer.from([1, 2, 3, 4]).toString('base64')],
    ['unpadded', Buffer.from([1, 2, 3, 4]).toString('base64').replace(/=+$/, '')],
    ['url-safe alphabet', Buffer.from([251, 255, 191]).toString('base64url')],
    [
      'with line breaks',
      `${Buffer.from('a'.repeat(80)).toString('base64').slice(0, 76)}\n${Buffer.from('a'.repeat(80)).toString('base64').slice(76)}`,
    ],
    ['1 MiB', Buffer.alloc(1024 * 1024, 7).toString('base64')],
  ])('decodes %s text to the bytes Buffer.from decodes', (_name, text) => {
    const [bytes] = encoder.encode([{ Id: '1', Raw: text, Blobs: [text, 'AA=='] }]);
    const got = type.decode(bytes!) as unknown as { Raw: Uint8Array; Blobs: Uint8Array[] };
    const want = Buffer.from(text, 'base64');
    expect(Buffer.from(got.Raw ?? []).equals(want)).toBe(true);
    expect(Buffer.from(got.Blobs[0] ?? []).equals(want)).toBe(true);
    expect(Buffer.from(got.Blobs[1]!).equals(Buffer.from([0]))).toBe(true);
  });
});

describe('row encoder refusals', () => {
  const encoder = new RowEncoder(descriptorOf(false));

  it('refuses a value for a column the descriptor lacks, naming it', () => {
    expect(() => encoder.encode([{ Id: '1', nickname: 'x' }])).toThrow(UnknownFieldError);
    expect(() => encoder.encode([{ Id: '1', nickname: 'x' }])).toThrow(/column nickname/);
  });

  it('refuses a NULL inside a list instead of dropping it', () => {
    expect(() => encoder.encode([{ Id: '1', Tags: ['a', null] }])).toThrow(
      /column Tags: a NULL inside a list/,
    );
  });

  it('refuses an INT64 that is not an integer, or is out of range, instead of wrapping it', () => {
    expect(() => encoder.encode([{ Id: '1.5' }])).toThrow();
    expect(() => encoder.encode([{ Id: '9223372036854775808' }])).toThrow(
      /column Id: .* out of the INT64 range/,
    );
    expect(() => encoder.encode([{ Id: '-9223372036854775809' }])).toThrow(/out of the INT64 range/);
  });

  it('refuses a list for a column that is not repeated', () => {
    expect(() => encoder.encode([{ Id: '1', Name: ['a'] }])).toThrow(/column Name: a list/);
  });
});
