/** Least privilege by construction: the exact set of grants, each on one resource, none public or project-wide. */
import { deployed, installMocks, PROJECT_NUMBER, type Recorded, settingsOf } from './harness';

const recorded = installMocks();

/** A grant as a reviewer reads it: who, which role, on what. */
/** IAM grants: every IAM resource but the writer's custom role, which is a role definition. */
const isGrant = (r: Recorded) => /iam/i.test(r.type) && r.type !== CUSTOM_ROLE;
const CUSTOM_ROLE = 'gcp:projects/iAMCustomRole:IAMCustomRole';

function grantsOf(rs: Recorded[]): string[] {
  return rs
    .filter(isGrant)
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
                    : r.type === 'gcp:pubsub/topicIAMMember:TopicIAMMember'
                      ? `topic ${i.topic}`
                      : r.type === 'gcp:pubsub/subscriptionIAMMember:SubscriptionIAMMember'
                        ? `subscription ${i.subscription}`
                        : r.type === 'gcp:projects/iAMMember:IAMMember'
                          ? `project ${i.project}`
                          : r.type === 'gcp:secretmanager/secretIamMember:SecretIamMember'
                            ? `secret ${i.secretId}`
                            : `UNEXPECTED ${r.type}`;
      const who = String(i.member).replace(
        /^serviceAccount:([^@]+)@acme-prod\.iam\.gserviceaccount\.com$/,
        '$1',
      );
      const condition = i.condition ? ` if ${(i.condition as { expression: string }).expression}` : '';
      return `${who} ${String(i.role).replace(/^roles\//, '')} on ${on}${condition}`;
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
  // The key of stream dead letters (ADR-2305): the reader seals, the backfill function checks; no one else.
  'sluice-reader secretmanager.secretAccessor on secret sluice-dead-letter-key',
  'sluice-backfill secretmanager.secretAccessor on secret sluice-dead-letter-key',
  // The writer: its one database, and object creation under the dead-letter prefix only.
  'sluice-writer projects/acme-prod/roles/sluice_spanner_writer on database main/orders',
  'sluice-writer storage.objectCreator on bucket acme-prod-sluice-ledger if resource.name.startsWith("projects/_/buckets/acme-prod-sluice-ledger/objects/writer-dead-letters/sluice/")',
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
  const iamTypes = new Set(all.filter(isGrant).map((r) => r.type));
  expect([...iamTypes].sort()).toEqual(
    [
      'gcp:bigquery/datasetIamMember:DatasetIamMember',
      'gcp:cloudrunv2/serviceIamMember:ServiceIamMember',
      'gcp:cloudtasks/queueIamMember:QueueIamMember',
      'gcp:secretmanager/secretIamMember:SecretIamMember',
      'gcp:serviceaccount/iAMMember:IAMMember',
      'gcp:spanner/databaseIAMMember:DatabaseIAMMember',
      'gcp:storage/bucketIAMMember:BucketIAMMember',
    ].sort(),
  );
  expect(
    all.filter(
      (r) =>
        (r.type.startsWith('gcp:projects/') && r.type !== CUSTOM_ROLE) ||
        r.type.startsWith('gcp:organizations/'),
    ),
  ).toEqual([]);
  // No grant is conditional-free on a wildcard or an owner/editor-like role.
  for (const r of all.filter(isGrant)) {
    expect(String(r.inputs.role)).not.toMatch(/owner|\.editor$|admin/i);
  }
});

test('lineage sent to the API: the API enabled, the producer role for the scheduler and backfill accounts only', async () => {
  const all = await deployWith({ lineage: { target: 'api', location: 'us' } });
  expect(grantsOf(all)).toEqual(
    [
      ...BASE,
      'sluice-scheduler datalineage.producer on project acme-prod',
      'sluice-backfill datalineage.producer on project acme-prod',
    ].sort(),
  );
  const api = all.filter((r) => r.type === 'gcp:projects/service:Service');
  expect(api.map((r) => r.inputs)).toEqual([
    expect.objectContaining({
      project: 'acme-prod',
      service: 'datalineage.googleapis.com',
      disableOnDestroy: false,
    }),
  ]);
  const fn = all.find((r) => r.type === 'gcp:cloudfunctionsv2/function:Function');
  if (!fn) throw new Error('no function deployed');
  const env = (fn.inputs.serviceConfig as { environmentVariables: Record<string, string> })
    .environmentVariables;
  expect(env).toMatchObject({
    SLUICE_LINEAGE: 'api',
    SLUICE_LINEAGE_LOCATION: 'us',
    SLUICE_LINEAGE_HEARTBEAT_MS: '300000',
  });
  // Logged only (the default): no API, no project grant.
  expect(
    (await deployWith({})).filter((r) => r.type.startsWith('gcp:projects/') && r.type !== CUSTOM_ROLE),
  ).toEqual([]);
});

test('a bad lineage setting fails the preview naming the field', () => {
  expect(() =>
    settingsOf({ deployment: { lineage: { target: 'api', location: 'Not A Location' } } }),
  ).toThrow(/sluice:lineage\.location: must be a location/);
  expect(() => settingsOf({ deployment: { lineage: { target: 'datahub' } } })).toThrow(
    /sluice:lineage\.target/,
  );
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

test('writer invokers and its Pub/Sub push subscription: one invoker account, the service agent on single resources', async () => {
  const all = await deployWith({
    writer: {
      invokers: ['serviceAccount:orders-api@acme-prod.iam.gserviceaccount.com'],
      deadLetterPrefix: 'writer-dead/',
      pubsub: {
        topic: 'projects/acme-prod/topics/order-mutations',
        deadLetterTopic: 'projects/acme-prod/topics/order-mutations-dead',
      },
    },
  });
  const agent = `serviceAccount:service-${PROJECT_NUMBER}@gcp-sa-pubsub.iam.gserviceaccount.com`;
  const writerGrants = grantsOf(all).filter((g) => !BASE.includes(g));
  expect(writerGrants).toEqual(
    [
      'sluice-writer storage.objectCreator on bucket acme-prod-sluice-ledger if resource.name.startsWith("projects/_/buckets/acme-prod-sluice-ledger/objects/writer-dead/")',
      'orders-api run.invoker on service sluice-writer',
      'sluice-push run.invoker on service sluice-writer',
      `${agent} iam.serviceAccountTokenCreator on account projects/acme-prod/serviceAccounts/sluice-push`,
      `${agent} pubsub.publisher on topic projects/acme-prod/topics/order-mutations-dead`,
      `${agent} pubsub.subscriber on subscription sluice-writer`,
    ].sort(),
  );
  const sub = all.find((r) => r.type === 'gcp:pubsub/subscription:Subscription');
  const writerUrl = `https://sluice-writer-${PROJECT_NUMBER}.europe-west1.run.app`;
  expect(sub?.inputs).toMatchObject({
    name: 'sluice-writer',
    topic: 'projects/acme-prod/topics/order-mutations',
    ackDeadlineSeconds: 600,
    pushConfig: {
      pushEndpoint: `${writerUrl}/mutations`,
      oidcToken: {
        serviceAccountEmail: 'sluice-push@acme-prod.iam.gserviceaccount.com',
        audience: writerUrl,
      },
    },
    retryPolicy: { minimumBackoff: '10s', maximumBackoff: '600s' },
    deadLetterPolicy: {
      deadLetterTopic: 'projects/acme-prod/topics/order-mutations-dead',
      maxDeliveryAttempts: 5,
    },
    expirationPolicy: { ttl: '' },
  });
});

test('the writer configuration is checked: an ack deadline shorter than the writer may run, a public invoker', () => {
  const pubsub = { topic: 'projects/acme-prod/topics/mutations', ackDeadlineSeconds: 60 };
  expect(() => settingsOf({ deployment: { writer: { pubsub } } })).toThrow(
    /sluice:writer.pubsub.ackDeadlineSeconds: must be at least the writer's timeout \(430s\)/,
  );
  expect(() => settingsOf({ deployment: { writer: { invokers: ['allUsers'] } } })).toThrow(
    /sluice:writer.invokers.0/,
  );
  expect(() => settingsOf({ deployment: { functions: { writer: { timeoutSeconds: 300 } } } })).toThrow(
    /sluice:functions.writer.timeoutSeconds: must be at least 410/,
  );
});

test('the writer holds a custom Spanner role: BatchWrite and schema reads, no DDL, no partitioned DML', async () => {
  const all = await deployWith({});
  const roles = all.filter((r) => r.type === CUSTOM_ROLE);
  expect(roles).toHaveLength(1);
  expect(roles[0]!.inputs).toMatchObject({ project: 'acme-prod', roleId: 'sluice_spanner_writer' });
  expect([...(roles[0]!.inputs.permissions as string[])].sort()).toEqual([
    'spanner.databases.beginReadOnlyTransaction',
    'spanner.databases.select',
    'spanner.databases.write',
    'spanner.sessions.create',
    'spanner.sessions.delete',
    'spanner.sessions.get',
  ]);
  const writer = grantsOf(all).filter((g) => g.startsWith('sluice-writer '));
  expect(writer.join('\n')).not.toMatch(/databaseUser|databaseAdmin|updateDdl/);
});

test('the dead-letter key: only the reader and the backfill function read it, pinned to its version (ADR-2305)', async () => {
  const all = await deployWith({});
  const secret = all.filter((r) => r.type === 'gcp:secretmanager/secret:Secret');
  expect(secret.map((r) => r.inputs.secretId)).toEqual(['sluice-dead-letter-key']);
  const accessors = all
    .filter((r) => r.type === 'gcp:secretmanager/secretIamMember:SecretIamMember')
    .map((r) => `${String(r.inputs.member)} ${String(r.inputs.role)}`)
    .sort();
  expect(accessors).toEqual([
    'serviceAccount:sluice-backfill@acme-prod.iam.gserviceaccount.com roles/secretmanager.secretAccessor',
    'serviceAccount:sluice-reader@acme-prod.iam.gserviceaccount.com roles/secretmanager.secretAccessor',
  ]);
  const secretEnv = Object.fromEntries(
    all
      .filter((r) => r.type === 'gcp:cloudfunctionsv2/function:Function')
      .map((r) => [
        r.name,
        (r.inputs.serviceConfig as { secretEnvironmentVariables?: unknown }).secretEnvironmentVariables,
      ]),
  );
  const key = {
    key: 'SLUICE_DEAD_LETTER_KEY',
    projectId: 'acme-prod',
    secret: 'sluice-dead-letter-key',
    version: '1',
  };
  expect(secretEnv).toEqual({ scheduler: undefined, reader: [key], backfill: [key], writer: undefined });
});
