/**
 * JSON values keep their numbers exactly in the emulator, in both dialects: integers beyond 2^53 within
 * INT64 / UINT64 as written (GoogleSQL), every number's text (PostgreSQL JSONB), keys sorted, whitespace gone,
 * deep nesting kept — as change records show them (JSON text, never through a JS number).
 */
process.env.METADATA_SERVER_DETECTION = 'none';

import type { Dialect } from '../../../shared/domain/change-record';
import { walkDag } from './change-streams/client-read';
import { dialectDatabases } from './support/dialect-databases';

const spanner = dialectDatabases({
  GOOGLE_STANDARD_SQL: [
    'CREATE TABLE J (Id INT64 NOT NULL, Doc JSON) PRIMARY KEY (Id)',
    'CREATE CHANGE STREAM S FOR J',
  ],
  POSTGRESQL: ['CREATE TABLE j (id bigint NOT NULL PRIMARY KEY, doc jsonb)', 'CREATE CHANGE STREAM s FOR j'],
});

const deep = (n: number): string => (n === 0 ? '1' : `{"d": ${deep(n - 1)}}`);

const INPUT = [
  ' { "b" : 12345678901234567890 , "a": -9223372036854775808, "b": 1 } ',
  '[0.1, 1.0, 1e2, 1.5e-3, 99999999999999999999]',
  deep(60),
];

test.each<[Dialect, string[]]>([
  [
    'GOOGLE_STANDARD_SQL',
    [
      '{"a":-9223372036854775808,"b":12345678901234567890}',
      '[0.1,1,100,0.0015,100000000000000000000]',
      deep(60).replace(/ /g, ''),
    ],
  ],
  [
    'POSTGRESQL',
    [
      '{"a":-9223372036854775808,"b":1}',
      '[0.1,1.0,100,0.0015,99999999999999999999]',
      deep(60).replace(/ /g, ''),
    ],
  ],
])('%s: JSON numbers and structure survive as text', async (dialect, expected) => {
  const db = spanner.db(dialect);
  const [t, s, id, doc] = dialect === 'POSTGRESQL' ? ['j', 's', 'id', 'doc'] : ['J', 'S', 'Id', 'Doc'];
  const start = spanner.emu.admin.nowNs();
  await db.database.table(t).insert(INPUT.map((d, i) => ({ [id]: String(i + 1), [doc]: d })));
  const walk = await walkDag(db.database, dialect, s, start, spanner.emu.admin.nowNs());
  const docs = walk.data.flatMap((r) => r.mods).sort((a, b) => Number(a.keys[id]) - Number(b.keys[id]));
  expect(docs.map((m) => m.newValues[doc])).toEqual(expected);
});

test('a malformed or too deep JSON value is refused', async () => {
  const table = spanner.g.database.table('J');
  for (const bad of ['{"a":}', '[1,]', deep(101), '01', '{"a":1} x'])
    await expect(table.insert({ Id: '9', Doc: bad })).rejects.toMatchObject({ code: 3 });
});
