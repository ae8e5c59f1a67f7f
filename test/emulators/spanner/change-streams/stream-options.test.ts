/**
 * `ALTER CHANGE STREAM … SET OPTIONS` while a stream runs, through the official client, in both dialects:
 * records committed after a capture-type change carry the new `value_capture_type` and its shape; the
 * `exclude_insert / update / delete` options drop those mods from then on; `allow_txn_exclusion` makes a
 * stream skip transactions that set `exclude_txn_from_change_streams` (read-write transactions, single-use
 * commits and batch writes), while streams without it still record them; read-only transactions refuse it.
 */
process.env.METADATA_SERVER_DETECTION = 'none';

import { MutationGroup, v1 } from '@google-cloud/spanner';
import * as grpc from '@grpc/grpc-js';
import type { Dialect } from '../../../../shared/domain/change-record';
import { applyDdl, dialectDatabases, dialectName } from '../support/dialect-databases';
import { walkDag } from './client-read';

const n = dialectName;
const ddl = applyDdl;

function setOptions(dialect: Dialect, stream: string, options: string): string {
  return dialect === 'POSTGRESQL'
    ? `ALTER CHANGE STREAM ${n(dialect, stream)} SET (${options})`
    : `ALTER CHANGE STREAM ${stream} SET OPTIONS (${options})`;
}

function schema(dialect: Dialect): string[] {
  const table =
    dialect === 'POSTGRESQL'
      ? 'CREATE TABLE t (id bigint NOT NULL PRIMARY KEY, a varchar, b varchar)'
      : 'CREATE TABLE T (Id INT64 NOT NULL, A STRING(MAX), B STRING(MAX)) PRIMARY KEY (Id)';
  const opt = (o: string) => (dialect === 'POSTGRESQL' ? `WITH (${o})` : `OPTIONS (${o})`);
  return [
    table,
    `CREATE CHANGE STREAM ${n(dialect, 'Main')} FOR ALL ${opt("value_capture_type = 'NEW_ROW'")}`,
    `CREATE CHANGE STREAM ${n(dialect, 'Skipping')} FOR ALL ${opt('allow_txn_exclusion = true')}`,
  ];
}

const t = dialectDatabases({
  GOOGLE_STANDARD_SQL: schema('GOOGLE_STANDARD_SQL'),
  POSTGRESQL: schema('POSTGRESQL'),
});

describe.each(['GOOGLE_STANDARD_SQL', 'POSTGRESQL'] as const)('%s', (dialect) => {
  const db = () => t.db(dialect).database;
  const T = (name: string) => n(dialect, name);
  const table = () => db().table(T('T'));
  const read = async (stream: string, from: bigint) =>
    (await walkDag(db(), dialect, T(stream), from, t.emu.admin.nowNs())).data.sort((a, b) =>
      a.commitTimestamp < b.commitTimestamp ? -1 : 1,
    );

  test('records after a capture-type change carry the new value_capture_type and shape', async () => {
    const from = t.emu.admin.nowNs();
    await table().insert({ [T('Id')]: '1', [T('A')]: 'a', [T('B')]: 'b' });
    await table().update({ [T('Id')]: '1', [T('A')]: 'a2' });
    await ddl(db(), [setOptions(dialect, 'Main', "value_capture_type = 'OLD_AND_NEW_VALUES'")]);
    await table().update({ [T('Id')]: '1', [T('A')]: 'a3' });
    await ddl(db(), [setOptions(dialect, 'Main', "value_capture_type = 'NEW_VALUES'")]);
    await table().update({ [T('Id')]: '1', [T('B')]: 'b4' });
    const seen = await read('Main', from);
    expect(seen.map((r) => [r.modType, r.valueCaptureType])).toEqual([
      ['INSERT', 'NEW_ROW'],
      ['UPDATE', 'NEW_ROW'],
      ['UPDATE', 'OLD_AND_NEW_VALUES'],
      ['UPDATE', 'NEW_VALUES'],
    ]);
    expect(seen[1]?.mods[0]?.newValues).toEqual({ [T('A')]: 'a2', [T('B')]: 'b' });
    expect(seen[2]?.mods[0]).toMatchObject({ newValues: { [T('A')]: 'a3' }, oldValues: { [T('A')]: 'a2' } });
    expect(seen[3]?.mods[0]).toMatchObject({ newValues: { [T('B')]: 'b4' }, oldValues: {} });
    expect(seen[3]?.columnTypes.map((c) => c.name)).toEqual([T('Id'), T('B')]);
    await ddl(db(), [setOptions(dialect, 'Main', "value_capture_type = 'NEW_ROW'")]);
  });

  test('exclude_insert, exclude_update and exclude_delete drop those mods from then on', async () => {
    const from = t.emu.admin.nowNs();
    await ddl(db(), [setOptions(dialect, 'Main', 'exclude_delete = true, exclude_insert = true')]);
    await table().insert({ [T('Id')]: '2', [T('A')]: 'x' });
    await table().update({ [T('Id')]: '2', [T('A')]: 'y' });
    await table().deleteRows(['2']);
    await ddl(db(), [
      setOptions(dialect, 'Main', 'exclude_delete = NULL, exclude_insert = false, exclude_update = true'),
    ]);
    await table().insert({ [T('Id')]: '3', [T('A')]: 'x' });
    await table().update({ [T('Id')]: '3', [T('A')]: 'y' });
    await table().deleteRows(['3']);
    await ddl(db(), [setOptions(dialect, 'Main', 'exclude_update = false')]);
    const seen = await read('Main', from);
    expect(seen.map((r) => [r.modType, r.mods[0]?.keys[T('Id')]])).toEqual([
      ['UPDATE', '2'],
      ['INSERT', '3'],
      ['DELETE', '3'],
    ]);
    const options =
      dialect === 'POSTGRESQL'
        ? "SELECT option_name, option_value FROM information_schema.change_stream_options WHERE change_stream_name = 'main' ORDER BY option_name"
        : "SELECT OPTION_NAME, OPTION_VALUE FROM INFORMATION_SCHEMA.CHANGE_STREAM_OPTIONS WHERE CHANGE_STREAM_NAME = 'Main' ORDER BY OPTION_NAME";
    const [rows] = await db().run({ sql: options, json: true });
    expect(rows.map((r) => Object.values(r as object))).toEqual([
      ['exclude_insert', 'false'],
      ['exclude_update', 'false'],
      ['value_capture_type', 'NEW_ROW'],
    ]);
  });

  test('allow_txn_exclusion skips transactions that ask to be excluded; other streams record them', async () => {
    const from = t.emu.admin.nowNs();
    await db().runTransactionAsync({ excludeTxnFromChangeStreams: true }, async (tx) => {
      tx.insert(T('T'), { [T('Id')]: '10', [T('A')]: 'rw' });
      await tx.commit();
    });
    await table().insert({ [T('Id')]: '11', [T('A')]: 'single' }, { excludeTxnFromChangeStreams: true });
    // The Node client sends the batch-write flag as `excludeTxnFromChangeStream` (no s), a field the
    // request does not have: the service never sees it and records the group, and so does the emulator.
    const group = new MutationGroup();
    group.insert(T('T'), { [T('Id')]: '12', [T('A')]: 'batch' });
    await new Promise<void>((resolve, reject) =>
      db()
        .batchWriteAtLeastOnce([group], { excludeTxnFromChangeStreams: true })
        .on('data', () => undefined)
        .on('error', reject)
        .on('end', () => resolve()),
    );
    // Sent with the request's own field name, the flag excludes the group.
    const gapic = rawClient();
    const [session] = await gapic.createSession({ database: t.db(dialect).name });
    const insert = {
      table: T('T'),
      columns: [T('Id'), T('A')],
      values: [{ values: [{ stringValue: '13' }, { stringValue: 'raw' }] }],
    };
    const batch = gapic.batchWrite({
      session: session.name,
      mutationGroups: [{ mutations: [{ insert }] }],
      excludeTxnFromChangeStreams: true,
    });
    for await (const _ of batch) {
      // drain
    }
    await table().insert({ [T('Id')]: '14', [T('A')]: 'recorded' });
    const keys = async (stream: string) =>
      (await read(stream, from)).flatMap((r) => r.mods.map((m) => m.keys[T('Id')]));
    expect(await keys('Skipping')).toEqual(['12', '14']);
    expect(await keys('Main')).toEqual(['10', '11', '12', '13', '14']);
    await gapic.close();
  });

  test('a read-only transaction cannot set exclude_txn_from_change_streams', async () => {
    const gapic = rawClient();
    const [session] = await gapic.createSession({ database: t.db(dialect).name });
    await expect(
      gapic.beginTransaction({
        session: session.name,
        options: { readOnly: { strong: true }, excludeTxnFromChangeStreams: true },
      }),
    ).rejects.toMatchObject({ code: 3, message: expect.stringMatching(/exclude_txn_from_change_streams/) });
    await gapic.close();
  });
});

/** The generated client of the same package, for request fields the handwritten client does not send. */
function rawClient(): InstanceType<typeof v1.SpannerClient> {
  return new v1.SpannerClient({
    servicePath: '127.0.0.1',
    port: t.emu.port,
    sslCreds: grpc.credentials.createInsecure(),
  });
}
