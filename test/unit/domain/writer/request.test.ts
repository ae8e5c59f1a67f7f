/** Request parsing: the body, the Pub/Sub envelope, and a named problem for each thing wrong. */
import { parseWriteRequest } from '../../../../shared/domain/writer/request';

const parse = (body: unknown, max = 100) => parseWriteRequest(body, max);
const problems = (body: unknown, max = 100) => {
  const r = parse(body, max);
  if (r.ok) throw new Error('accepted');
  return r.problems;
};

test('a body of mutations, each naming its table; delete by key', () => {
  const r = parse({
    mutations: [
      { op: 'insert', table: 'T', row: { Id: '1' } },
      { op: 'delete', table: 'U', key: ['1', 'a'] },
    ],
  });
  expect(r).toEqual({
    ok: true,
    value: {
      mutations: [
        { index: 0, op: 'insert', table: 'T', row: { Id: '1' } },
        { index: 1, op: 'delete', table: 'U', key: ['1', 'a'] },
      ],
    },
  });
});

test('raw text and bytes are parsed; text that is not JSON says so', () => {
  const text = JSON.stringify({ mutations: [{ op: 'replace', table: 'T', row: {} }] });
  expect(parse(text).ok).toBe(true);
  expect(parse(Buffer.from(text)).ok).toBe(true);
  expect(problems('{"mutations": [')).toEqual([expect.stringMatching(/^body: not JSON/)]);
  expect(problems([1])).toEqual([
    'body: must be a JSON object {"mutations": [...]} or a Pub/Sub push envelope',
  ]);
});

test('every problem is named with its path, all at once', () => {
  expect(
    problems({
      mutations: [
        { op: 'upsert', table: 'T', row: {} },
        { op: 'insert', table: '', row: [] },
        { op: 'delete', table: 'T', key: [] },
        { op: 'update', table: 'T', row: {}, extra: 1 },
        'nope',
      ],
    }),
  ).toEqual([
    'mutations[0].op: must be one of insert, update, insertOrUpdate, replace, delete, saw "upsert"',
    'mutations[1].table: must be a table name (a string)',
    'mutations[1].row: must be an object of column name to value',
    'mutations[2].key: must be the list of primary-key values, in key order',
    expect.stringMatching(/^mutations\[3\]: Unrecognized key: "extra"/),
    'mutations[4]: must be an object {"op", "table", "row" | "key"}',
  ]);
  expect(problems({ mutations: [] })).toEqual(['mutations: must not be empty']);
  expect(problems({})).toEqual(['mutations: must be a list of mutations']);
  expect(problems({ mutations: [{}], rows: [] })).toEqual([
    expect.stringMatching(/^body: Unrecognized key: "rows"/),
  ]);
});

test('too many mutations in one request', () => {
  const m = { op: 'insert', table: 'T', row: {} };
  expect(problems({ mutations: [m, m, m] }, 2)).toEqual(['mutations: at most 2 per request, got 3']);
});

test('a Pub/Sub push envelope carries the same body in base64, with its message id', () => {
  const data = Buffer.from(
    JSON.stringify({ mutations: [{ op: 'insertOrUpdate', table: 'T', row: { Id: 1 } }] }),
  ).toString('base64');
  const r = parse({
    message: { data, messageId: '42', publishTime: '2024-01-01T00:00:00Z', attributes: { a: 'b' } },
    subscription: 'projects/p/subscriptions/s',
    deliveryAttempt: 3,
  });
  expect(r).toEqual({
    ok: true,
    value: {
      mutations: [{ index: 0, op: 'insertOrUpdate', table: 'T', row: { Id: 1 } }],
      pubsub: {
        messageId: '42',
        subscription: 'projects/p/subscriptions/s',
        publishTime: '2024-01-01T00:00:00Z',
        deliveryAttempt: 3,
      },
    },
  });
  const bad = Buffer.from(JSON.stringify({ mutations: [{ op: 'x' }] })).toString('base64');
  expect(problems({ message: { data: bad, messageId: '1' } })).toEqual([
    // A bad op does not hide the mutation's other problems.
    'message.data.mutations[0].op: must be one of insert, update, insertOrUpdate, replace, delete, saw "x"',
    'message.data.mutations[0].table: must be a table name (a string)',
    'message.data.mutations[0].row: must be an object of column name to value',
  ]);
  expect(problems({ message: { data: '%%%', messageId: '1' } })).toEqual(['message.data: must be base64']);
  expect(problems({ message: { data: Buffer.from('nope').toString('base64') } })).toEqual([
    expect.stringMatching(/^message\.data: not JSON/),
  ]);
  expect(problems({ message: {} })).toEqual([
    'message.data: must be the base64 of the JSON body {"mutations": [...]}',
  ]);
});

test('shapes next to the plain one are refused with their problem, not let through', () => {
  expect(
    problems({
      mutations: [
        { op: 'insert', table: 'T', key: ['1'] },
        { op: 'delete', table: 'T', row: { Id: '1' } },
        { op: 'insert', table: 'T', row: null },
        { op: 'insert', table: 7, row: {} },
        { op: 'insert', row: {}, extra: 1 },
        { op: 'delete', table: 'T', key: '1' },
      ],
    }),
  ).toEqual([
    'mutations[0].row: must be an object of column name to value',
    expect.stringMatching(/^mutations\[0\]: Unrecognized key: "key"/),
    'mutations[1].key: must be the list of primary-key values, in key order',
    expect.stringMatching(/^mutations\[1\]: Unrecognized key: "row"/),
    'mutations[2].row: must be an object of column name to value',
    'mutations[3].table: must be a table name (a string)',
    'mutations[4].table: must be a table name (a string)',
    expect.stringMatching(/^mutations\[4\]: Unrecognized key: "extra"/),
    'mutations[5].key: must be the list of primary-key values, in key order',
  ]);
});

test('a row keeps every member the producer sent, "__proto__" included (typing then names it)', () => {
  const r = parseWriteRequest(
    '{"mutations": [{"op": "insert", "table": "T", "row": {"Id": "1", "__proto__": 2}}]}',
    10,
  );
  if (!r.ok) throw new Error(r.problems.join('; '));
  const [m] = r.value.mutations;
  expect(m && 'row' in m ? Object.keys(m.row) : undefined).toEqual(['Id', '__proto__']);
});
