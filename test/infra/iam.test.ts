/** Least privilege by construction: the exact set of grants, each on one resource, none public or project-wide. */
import { deployed, installMocks, type Recorded, settingsOf } from './harness';

const recorded = installMocks();

/** A grant as a reviewer reads it: who, which role, on what. */
function grantsOf(rs: Recorded[]): string[] {
  return rs
    .filter((r) => /iam/i.test(r.type))
    .map((r) => {
      const i = r.inputs;
      const on =
        r.type === 'gcp:storage/bucketIAMMember:BucketIAMMember'
          ? `bucket ${i.bucket}`
          : r.type === 'gcp:spanner/databaseIAMMember:DatabaseIAMMember'
            ? `database ${i.instance}/${i.database}`
            : r.type === 'gcp:bigquery/datasetIamMember:DatasetIamMember'
              ? `dataset ${i.datasetId}`
              : r.type === 'gcp:cloudtasks/queueIamMember:QueueIamMember'
                ? `queue ${i.name}`
                : r.type === 'gcp:serviceaccount/iAMMember:IAMMember'
                  ? `account ${i.serviceAccountId}`
                  : r.type === 'gcp:cloudrunv2/serviceIamMember:ServiceIamMember'
                    ? `service ${i.name}`
                    : `UNEXPECTED ${r.type}`;
      const who = String(i.member).replace(
        /^serviceAccount:([^@]+)@acme-prod\.iam\.gserviceaccount\.com$/,
        '$1',
      );
      return `${who} ${String(i.role).replace('roles/', '')} on ${on}`;
    })
    .sort();
}

const BASE = [
  'sluice-scheduler storage.objectUser on bucket acme-prod-sluice-ledger',
  'sluice-reader storage.objectUser on bucket acme-prod-sluice-ledger',
  'sluice-backfill storage.objectUser on bucket acme-prod-sluice-ledger',
  'sluice-scheduler spanner.databaseReader on database main/orders',
  'sluice-reader spanner.databaseReader on database main/orders',
  'sluice-backfill spanner.databaseReader on database main/orders',
  'sluice-scheduler bigquery.dataEditor on dataset orders_replica',
  'sluice-reader bigquery.dataEditor on dataset orders_replica',
  'sluice-backfill bigquery.dataEditor on dataset orders_replica',
  'sluice-scheduler cloudtasks.enqueuer on queue sluice-reader',
  'sluice-reader cloudtasks.enqueuer on queue sluice-reader',
  'sluice-scheduler cloudtasks.enqueuer on queue sluice-backfill',
  'sluice-backfill cloudtasks.enqueuer on queue sluice-backfill',
  'sluice-scheduler iam.serviceAccountUser on account projects/acme-prod/serviceAccounts/sluice-tasks',
  'sluice-reader iam.serviceAccountUser on account projects/acme-prod/serviceAccounts/sluice-tasks',
  'sluice-backfill iam.serviceAccountUser on account projects/acme-prod/serviceAccounts/sluice-tasks',
  'sluice-tasks run.invoker on service sluice-reader',
  'sluice-tasks run.invoker on service sluice-backfill',
  'sluice-cron run.invoker on service sluice-scheduler',
];

async function deployWith(deployment: Record<string, unknown>): Promise<Recorded[]> {
  const before = recorded.length;
  await deployed(settingsOf({ deployment }));
  const mine = recorded.slice(before);
  recorded.length = before;
  return mine;
}

test('the default deployment makes exactly the least-privilege grants', async () => {
  expect(grantsOf(await deployWith({}))).toEqual([...BASE].sort());
});

test('Data Boost adds its role for the backfill account only; operators may only invoke the backfill API', async () => {
  const grants = grantsOf(await deployWith({ dataBoost: true, operators: ['group:data-eng@acme.example'] }));
  expect(grants).toEqual(
    [
      ...BASE,
      'sluice-backfill spanner.databaseReaderWithDataBoost on database main/orders',
      'group:data-eng@acme.example run.invoker on service sluice-backfill',
    ].sort(),
  );
});

test('nothing public, nothing on the project, no authoritative policy that would wipe other grants', async () => {
  const all = await deployWith({ dataBoost: true, operators: ['user:ops@acme.example'] });
  expect(JSON.stringify(all.map((r) => r.inputs))).not.toMatch(/allUsers|allAuthenticatedUsers/);
  const iamTypes = new Set(all.filter((r) => /iam/i.test(r.type)).map((r) => r.type));
  expect([...iamTypes].sort()).toEqual(
    [
      'gcp:bigquery/datasetIamMember:DatasetIamMember',
      'gcp:cloudrunv2/serviceIamMember:ServiceIamMember',
      'gcp:cloudtasks/queueIamMember:QueueIamMember',
      'gcp:serviceaccount/iAMMember:IAMMember',
      'gcp:spanner/databaseIAMMember:DatabaseIAMMember',
      'gcp:storage/bucketIAMMember:BucketIAMMember',
    ].sort(),
  );
  expect(
    all.filter((r) => r.type.startsWith('gcp:projects/') || r.type.startsWith('gcp:organizations/')),
  ).toEqual([]);
  // No grant is conditional-free on a wildcard or an owner/editor-like role.
  for (const r of all.filter((x) => /iam/i.test(x.type))) {
    expect(String(r.inputs.role)).not.toMatch(/owner|\.editor$|admin/i);
  }
});

test('public principals are refused in the stack configuration, naming the field', () => {
  expect(() => settingsOf({ deployment: { operators: ['allUsers'] } })).toThrow(/sluice:operators\.0: /);
  expect(() => settingsOf({ deployment: { operators: ['group:allAuthenticatedUsers'] } })).toThrow(
    /sluice:operators\.0: public principals are not allowed/,
  );
});

test('the demo database, when enabled, is created with a change stream and read through a database grant', async () => {
  const all = await deployWith({ demoDatabase: true });
  const db = all.find((r) => r.type === 'gcp:spanner/database:Database');
  expect(db?.inputs).toMatchObject({ instance: 'main', name: 'orders', deletionProtection: false });
  expect(String((db?.inputs.ddls as string[] | undefined)?.[1])).toMatch(
    /^CREATE CHANGE STREAM OrdersStream FOR ALL .*value_capture_type = 'NEW_ROW_AND_OLD_VALUES'/,
  );
  expect(grantsOf(all)).toEqual([...BASE].sort());
});
