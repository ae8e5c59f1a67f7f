/** The resource graph a user reviews before `pulumi up`: every resource with its key settings. */
import { deployed, installMocks, PROJECT_NUMBER, type Recorded, resolved, settingsOf } from './harness';

const recorded = installMocks();

function only(type: string): Recorded[] {
  return recorded.filter((r) => r.type === type);
}
function one(type: string, name: string): Recorded {
  const r = recorded.find((x) => x.type === type && x.name === name);
  if (!r)
    throw new Error(
      `no ${type} named ${name}; have ${recorded.map((x) => `${x.type}/${x.name}`).join(', ')}`,
    );
  return r;
}

let outputs: Awaited<ReturnType<typeof deployed>>['outputs'];
beforeAll(async () => {
  outputs = (await deployed(settingsOf())).outputs;
});

test('the ledger bucket is private, uniform, versioned, and expires finished jobs and old versions', () => {
  const b = one('gcp:storage/bucket:Bucket', 'ledger').inputs;
  expect(b).toMatchObject({
    name: 'acme-prod-sluice-ledger',
    location: 'europe-west1',
    uniformBucketLevelAccess: true,
    publicAccessPrevention: 'enforced',
    versioning: { enabled: true },
  });
  expect(b.lifecycleRules).toEqual([
    { action: { type: 'Delete' }, condition: { daysSinceNoncurrentTime: 3, withState: 'ARCHIVED' } },
    { action: { type: 'Delete' }, condition: { daysSinceCustomTime: 30, withState: 'LIVE' } },
  ]);
});

test('the queues carry rate limits and retries derived from the function sizes', () => {
  const reader = one('gcp:cloudtasks/queue:Queue', 'reader-queue').inputs;
  expect(reader).toMatchObject({
    name: 'sluice-reader',
    location: 'europe-west1',
    // 10 reader instances × 16 concurrent windows (scheduled mode)
    rateLimits: { maxDispatchesPerSecond: 100, maxConcurrentDispatches: 160 },
    retryConfig: {
      maxAttempts: 20,
      minBackoff: '1s',
      maxBackoff: '60s',
      maxDoublings: 4,
      maxRetryDuration: '0s',
    },
  });
  const backfill = one('gcp:cloudtasks/queue:Queue', 'backfill-queue').inputs;
  expect(backfill).toMatchObject({
    name: 'sluice-backfill',
    rateLimits: { maxDispatchesPerSecond: 5, maxConcurrentDispatches: 4 },
    retryConfig: { maxAttempts: 10, minBackoff: '10s', maxBackoff: '300s' },
  });
});

test('four gen2 functions on nodejs22, one service account each, never open without IAM', () => {
  const fns = only('gcp:cloudfunctionsv2/function:Function');
  expect(fns.map((f) => f.name).sort()).toEqual(['backfill', 'reader', 'scheduler', 'writer']);
  for (const f of fns) {
    const build = f.inputs.buildConfig as Record<string, unknown>;
    const svc = f.inputs.serviceConfig as Record<string, unknown>;
    expect(build).toMatchObject({ runtime: 'nodejs22', entryPoint: f.name });
    expect(svc.serviceAccountEmail).toBe(`sluice-${f.name}@acme-prod.iam.gserviceaccount.com`);
    expect(svc.timeoutSeconds as number).toBeLessThanOrEqual(1800);
    expect(svc.minInstanceCount).toBe(0);
  }
  const svc = (name: string) => one('gcp:cloudfunctionsv2/function:Function', name).inputs.serviceConfig;
  expect(svc('reader')).toMatchObject({
    ingressSettings: 'ALLOW_INTERNAL_ONLY',
    // window.maxMs (default 10 min) + 60 s to flush
    timeoutSeconds: 660,
    availableMemory: '1Gi',
    availableCpu: '1',
    maxInstanceCount: 10,
    maxInstanceRequestConcurrency: 16,
  });
  expect(svc('scheduler')).toMatchObject({ ingressSettings: 'ALLOW_INTERNAL_ONLY', maxInstanceCount: 1 });
  expect(svc('backfill')).toMatchObject({ ingressSettings: 'ALLOW_ALL', timeoutSeconds: 1800 });
  // The writer's 400 s request deadline (its worst-case retries fit) plus time to answer.
  expect(svc('writer')).toMatchObject({
    ingressSettings: 'ALLOW_ALL',
    timeoutSeconds: 430,
    availableMemory: '512Mi',
  });
});

test('every function refuses to serve an invalid configuration: it exits before it listens (ADR-2004)', () => {
  const fns = only('gcp:cloudfunctionsv2/function:Function');
  expect(fns).toHaveLength(4);
  for (const f of fns) {
    const svc = f.inputs.serviceConfig as { environmentVariables: Record<string, string> };
    // With this policy a bad configuration fails Cloud Run's startup probe instead of serving 503s.
    expect(svc.environmentVariables).toMatchObject({
      SLUICE_ON_INVALID_CONFIG: 'exit',
      SLUICE_FUNCTION: f.name,
    });
    // All traffic on the latest revision that became ready: a revision that failed its probe never gets any.
    expect(f.inputs.serviceConfig).toMatchObject({ allTrafficOnLatestRevision: true });
  }
});

test("the backfill function identifies callers by Cloud Run's verified token, naming the tasks invoker (ADR-2306)", () => {
  const env = (
    one('gcp:cloudfunctionsv2/function:Function', 'backfill').inputs.serviceConfig as {
      environmentVariables: Record<string, string>;
    }
  ).environmentVariables;
  expect(env.SLUICE_TASKS_SERVICE_ACCOUNT).toBe('sluice-tasks@acme-prod.iam.gserviceaccount.com');
  // The default, cloud-run: loopback callers without a token are trusted only on the local stack.
  expect(env.SLUICE_CALLER_IDENTITY).toBeUndefined();
});

test('the resource set: how many of each type the default deployment creates', () => {
  const counts: Record<string, number> = {};
  for (const r of recorded) counts[r.type] = (counts[r.type] ?? 0) + 1;
  expect(counts).toEqual({
    'gcp:bigquery/dataset:Dataset': 1,
    'gcp:bigquery/datasetIamMember:DatasetIamMember': 3,
    'gcp:cloudfunctionsv2/function:Function': 4,
    'gcp:cloudrunv2/serviceIamMember:ServiceIamMember': 3,
    'gcp:cloudscheduler/job:Job': 1,
    'gcp:cloudtasks/queue:Queue': 2,
    'gcp:cloudtasks/queueIamMember:QueueIamMember': 4,
    'gcp:logging/metric:Metric': 19,
    'gcp:monitoring/alertPolicy:AlertPolicy': 9,
    'gcp:monitoring/dashboard:Dashboard': 1,
    // The writer's Spanner role (ADR-2304): a role definition, not a grant.
    'gcp:projects/iAMCustomRole:IAMCustomRole': 1,
    // The key of stream dead letters and its two readers (ADR-2305).
    'gcp:secretmanager/secret:Secret': 1,
    'gcp:secretmanager/secretIamMember:SecretIamMember': 2,
    'gcp:secretmanager/secretVersion:SecretVersion': 1,
    'gcp:serviceaccount/account:Account': 6,
    'gcp:serviceaccount/iAMMember:IAMMember': 3,
    'gcp:spanner/databaseIAMMember:DatabaseIAMMember': 4,
    'gcp:storage/bucket:Bucket': 2,
    'gcp:storage/bucketIAMMember:BucketIAMMember': 4,
    'gcp:storage/bucketObject:BucketObject': 1,
  });
});

test("the writer alone gets its own variables (the others its dead-letter prefix); dead letters under the pipeline's prefix of the ledger bucket", () => {
  const envOf = (name: string) =>
    (
      one('gcp:cloudfunctionsv2/function:Function', name).inputs.serviceConfig as {
        environmentVariables: Record<string, string>;
      }
    ).environmentVariables;
  expect(envOf('writer')).toMatchObject({
    SLUICE_FUNCTION: 'writer',
    SLUICE_LEDGER_BUCKET: 'acme-prod-sluice-ledger',
    SLUICE_SPANNER_INSTANCE: 'main',
    SLUICE_SPANNER_DATABASE: 'orders',
    SLUICE_WRITER_DEAD_LETTER_PREFIX: 'writer-dead-letters/sluice/',
    SLUICE_WRITER_CONSTRAINT_VIOLATION_POLICY: 'fail',
    SLUICE_WRITER_ORDERING: 'none',
    SLUICE_WRITER_REQUEST_DEADLINE_MS: '400000',
  });
  // The others get only where the writer's dead letters are, to count and list them (ADR-2203).
  for (const fn of ['reader', 'scheduler', 'backfill'])
    expect(Object.entries(envOf(fn)).filter(([k]) => k.startsWith('SLUICE_WRITER_'))).toEqual([
      ['SLUICE_WRITER_DEAD_LETTER_PREFIX', 'writer-dead-letters/sluice/'],
    ]);
  // No push subscription unless configured.
  expect(only('gcp:pubsub/subscription:Subscription')).toEqual([]);
});

test('every function gets the pipeline configuration and where the deployment put things', () => {
  const env = (
    one('gcp:cloudfunctionsv2/function:Function', 'reader').inputs.serviceConfig as {
      environmentVariables: Record<string, string>;
    }
  ).environmentVariables;
  expect(env).toMatchObject({
    GOOGLE_CLOUD_PROJECT: 'acme-prod',
    SLUICE_LEDGER_BUCKET: 'acme-prod-sluice-ledger',
    SLUICE_READER_QUEUE: 'projects/acme-prod/locations/europe-west1/queues/sluice-reader',
    SLUICE_BACKFILL_QUEUE: 'projects/acme-prod/locations/europe-west1/queues/sluice-backfill',
    SLUICE_TASKS_SERVICE_ACCOUNT: 'sluice-tasks@acme-prod.iam.gserviceaccount.com',
    SLUICE_READER_URL: `https://sluice-reader-${PROJECT_NUMBER}.europe-west1.run.app`,
    SLUICE_BACKFILL_URL: `https://sluice-backfill-${PROJECT_NUMBER}.europe-west1.run.app`,
    SLUICE_FUNCTION: 'reader',
    SLUICE_SPANNER_DATABASE: 'orders',
  });
});

test('the source archive is uploaded under a content-hash name and built from storage', () => {
  const obj = one('gcp:storage/bucketObject:BucketObject', 'function-source').inputs;
  expect(obj.name).toMatch(/^functions-[0-9a-f]{16}\.zip$/);
  const build = one('gcp:cloudfunctionsv2/function:Function', 'reader').inputs.buildConfig as {
    source: { storageSource: { bucket: string; object: string } };
  };
  expect(build.source.storageSource).toEqual({ bucket: 'acme-prod-sluice-source', object: obj.name });
});

test('the scheduler job ticks every minute with an OIDC token of its own invoker', () => {
  const job = one('gcp:cloudscheduler/job:Job', 'tick').inputs;
  const uri = `https://sluice-scheduler-${PROJECT_NUMBER}.europe-west1.run.app`;
  expect(job).toMatchObject({
    schedule: '* * * * *',
    attemptDeadline: '300s',
    retryConfig: { retryCount: 0 },
    httpTarget: {
      uri,
      httpMethod: 'POST',
      headers: { 'Content-Type': 'application/json' },
      oidcToken: { serviceAccountEmail: 'sluice-cron@acme-prod.iam.gserviceaccount.com', audience: uri },
    },
  });
});

test('the dataset is created, tables are left to the pipeline, no demo database by default', () => {
  expect(one('gcp:bigquery/dataset:Dataset', 'dataset').inputs).toMatchObject({
    datasetId: 'orders_replica',
    location: 'europe-west1',
    deleteContentsOnDestroy: false,
  });
  expect(only('gcp:bigquery/table:Table')).toEqual([]);
  expect(only('gcp:spanner/database:Database')).toEqual([]);
});

test("log-based metrics (the writer's per-request figures too), nine alert policies and a dashboard", () => {
  const metrics = only('gcp:logging/metric:Metric').map((m) => m.inputs.name);
  const writer = [
    'mutations',
    'retried',
    'transient_errors',
    'buffered_cells',
    'buffered_bytes',
    'groups_routed',
    'routed',
    'failed',
    'rejected',
    'errors',
  ];
  expect(metrics.sort()).toEqual(
    [
      'dead_lettered',
      'failures',
      'partition_failed',
      'pipeline_failed',
      'records',
      'replication_lag',
      'retention_danger',
      'retries',
      'rows',
      ...writer.map((w) => `writer_${w}`),
    ]
      .map((m) => `sluice/${m}`)
      .sort(),
  );
  const routed = one('gcp:logging/metric:Metric', 'metric-writer_routed').inputs;
  expect(routed.filter).toContain('resource.labels.service_name="sluice-writer"');
  expect(routed.filter).toContain('jsonPayload.event="writer.request" AND jsonPayload.groupsRouted>0');
  expect(one('gcp:logging/metric:Metric', 'metric-writer_buffered_cells').inputs.valueExtractor).toBe(
    'EXTRACT(jsonPayload.bufferedCells)',
  );
  const lag = one('gcp:logging/metric:Metric', 'metric-replication_lag').inputs;
  expect(lag.filter).toContain('resource.labels.service_name="sluice-scheduler"');
  expect(lag.valueExtractor).toBe('EXTRACT(jsonPayload.lagSeconds)');
  const alerts = only('gcp:monitoring/alertPolicy:AlertPolicy');
  expect(alerts.map((a) => a.name).sort()).toEqual([
    'dead-lettered-alert',
    'failed-alert',
    'lag-alert',
    'partition-failed-alert',
    'retention-alert',
    'writer-errors-alert',
    'writer-failed-alert',
    'writer-rejected-alert',
    'writer-routed-alert',
  ]);
  // A request refused as malformed (400/413) and one the writer could not handle at all (500/503/429 with
  // no per-mutation answer) are counted from their own events, and each pages.
  const rejected = one('gcp:logging/metric:Metric', 'metric-writer_rejected').inputs;
  expect(rejected.filter).toContain('resource.labels.service_name="sluice-writer"');
  expect(rejected.filter).toContain('jsonPayload.event="writer.rejected"');
  expect(one('gcp:logging/metric:Metric', 'metric-writer_errors').inputs.filter).toContain(
    'jsonPayload.event="writer.failed"',
  );
  for (const name of [
    'writer-routed-alert',
    'writer-failed-alert',
    'writer-rejected-alert',
    'writer-errors-alert',
    'partition-failed-alert',
  ]) {
    const conditions = JSON.stringify(one('gcp:monitoring/alertPolicy:AlertPolicy', name).inputs.conditions);
    expect(conditions).toContain(
      `logging.googleapis.com/user/sluice/${name.replace('-alert', '').replace('-', '_')}`,
    );
    expect(conditions).toContain('"thresholdValue":0');
  }
  const lagAlert = one('gcp:monitoring/alertPolicy:AlertPolicy', 'lag-alert').inputs;
  expect(JSON.stringify(lagAlert.conditions)).toContain('"thresholdValue":600');
  const dash = JSON.parse(
    String(one('gcp:monitoring/dashboard:Dashboard', 'dashboard').inputs.dashboardJson),
  );
  expect(dash.mosaicLayout.tiles).toHaveLength(19);
});

test('stack outputs name the URLs, the backfill endpoint, the status URL, bucket and queues', async () => {
  const backfill = `https://sluice-backfill-${PROJECT_NUMBER}.europe-west1.run.app`;
  expect(await resolved(outputs.backfillEndpoint)).toBe(`${backfill}/backfills`);
  expect(await resolved(outputs.statusUrl)).toBe(`${backfill}/status`);
  expect(await resolved(outputs.readerUrl)).toBe(
    `https://sluice-reader-${PROJECT_NUMBER}.europe-west1.run.app`,
  );
  expect(await resolved(outputs.ledgerBucket)).toBe('acme-prod-sluice-ledger');
  expect(await resolved(outputs.readerQueue)).toBe('sluice-reader');
  expect(await resolved(outputs.backfillQueue)).toBe('sluice-backfill');
  const writer = `https://sluice-writer-${PROJECT_NUMBER}.europe-west1.run.app`;
  expect(await resolved(outputs.writerEndpoint)).toBe(`${writer}/mutations`);
  expect(await resolved(outputs.writerSubscription)).toBeUndefined();
});
