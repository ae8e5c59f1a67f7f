/**
 * The whole deployment from {@link InfraSettings}: creates every resource group and returns the stack
 * outputs. Kept apart from `index.ts` (which reads the Pulumi config and the built source) so tests can
 * run it under Pulumi's mocks with any settings and a small source archive.
 */
import * as gcp from '@pulumi/gcp';
import * as pulumi from '@pulumi/pulumi';
import { grantAccess, grantKeyAccess } from './resources/access';
import { createAccounts } from './resources/accounts';
import { createDataset, createDemoDatabase } from './resources/data';
import { createFunctions } from './resources/functions';
import { enableLineageApi } from './resources/lineage';
import { createMonitoring } from './resources/monitoring';
import { createQueues } from './resources/queues';
import { createSchedulerJob, serviceUri } from './resources/schedule';
import { createDeadLetterKey } from './resources/secrets';
import { createBuckets } from './resources/storage';
import { createWriterSubscription } from './resources/writer';
import type { InfraSettings } from './settings';
import type { ArchiveEntry } from './source-archive';

/** What `pulumi up` prints and what other stacks may reference. */
export interface StackOutputs {
  schedulerUrl: pulumi.Output<string>;
  readerUrl: pulumi.Output<string>;
  backfillUrl: pulumi.Output<string>;
  /** `POST` here to start a backfill, `GET <endpoint>/{id}` for its progress. */
  backfillEndpoint: pulumi.Output<string>;
  /** `GET` here for lag, partitions and failures. */
  statusUrl: pulumi.Output<string>;
  ledgerBucket: pulumi.Output<string>;
  /** The first reader queue; `readerQueues` lists every shard. */
  readerQueue: pulumi.Output<string>;
  readerQueues: pulumi.Output<string[]>;
  backfillQueue: pulumi.Output<string>;
  writerUrl: pulumi.Output<string>;
  /** `POST` mutations here (docs/writer.md). */
  writerEndpoint: pulumi.Output<string>;
  /** The writer's push subscription, when `sluice:writer.pubsub` is set. */
  writerSubscription: pulumi.Output<string | undefined>;
  dataset: pulumi.Output<string>;
  dashboard: pulumi.Output<string>;
}

/** Everything created, for tests that review the resource graph. */
export interface Deployment {
  outputs: StackOutputs;
  resources: pulumi.Resource[];
}

/** Creates the deployment. */
export function deploy(s: InfraSettings, source: readonly ArchiveEntry[]): Deployment {
  const buckets = createBuckets(s);
  const queues = createQueues(s);
  const accounts = createAccounts(s);
  const dataset = createDataset(s);
  const database = createDemoDatabase(s);
  const key = createDeadLetterKey(s);
  const keyGrants = grantKeyAccess(s, accounts, key.secret);
  const functions = createFunctions(s, buckets.source, source, accounts, { key, grants: keyGrants });
  const job = createSchedulerJob(s, functions.byName.scheduler, accounts);
  const subscription = createWriterSubscription(s, functions.byName.writer, accounts);
  const projectNumber = gcp.organizations.getProjectOutput({ projectId: s.project }).number;
  const grants = grantAccess(s, accounts, {
    ledger: buckets.ledger,
    dataset,
    queues,
    functions,
    database,
    subscription,
    projectNumber,
  });
  const monitoring = createMonitoring(s);
  const lineageApi = enableLineageApi(s);
  const backfillUrl = serviceUri(functions.byName.backfill);
  const writerUrl = serviceUri(functions.byName.writer);
  const outputs: StackOutputs = {
    schedulerUrl: serviceUri(functions.byName.scheduler),
    readerUrl: serviceUri(functions.byName.reader),
    backfillUrl,
    backfillEndpoint: pulumi.interpolate`${backfillUrl}/backfills`,
    statusUrl: pulumi.interpolate`${backfillUrl}/status`,
    ledgerBucket: buckets.ledger.name,
    readerQueue: queues.reader[0]!.name,
    readerQueues: pulumi.all(queues.reader.map((q) => q.name)),
    backfillQueue: queues.backfill.name,
    writerUrl,
    writerEndpoint: pulumi.interpolate`${writerUrl}/mutations`,
    writerSubscription: subscription ? subscription.name : pulumi.output(undefined),
    dataset: dataset.datasetId,
    dashboard: monitoring.dashboard.id,
  };
  const resources: pulumi.Resource[] = [
    buckets.ledger,
    buckets.source,
    ...queues.reader,
    queues.backfill,
    ...Object.values(accounts.runtime),
    accounts.tasksInvoker,
    accounts.cronInvoker,
    ...(accounts.pushInvoker ? [accounts.pushInvoker] : []),
    ...(subscription ? [subscription] : []),
    dataset,
    ...(database ? [database] : []),
    functions.source,
    ...Object.values(functions.byName),
    job,
    key.secret,
    key.version,
    ...keyGrants,
    ...grants,
    ...(lineageApi ? [lineageApi] : []),
    ...Object.values(monitoring.metrics),
    ...Object.values(monitoring.alerts),
    monitoring.dashboard,
  ];
  return { outputs, resources };
}
