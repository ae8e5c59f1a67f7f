/** One service account per function, and one per token signer (Cloud Tasks, Cloud Scheduler). */
import * as gcp from '@pulumi/gcp';
import type { FunctionName } from '../deployment-schema';
import type { InfraSettings } from '../settings';

/** Every service account the deployment creates. */
export interface Accounts {
  runtime: Record<FunctionName, gcp.serviceaccount.Account>;
  /** Named in the OIDC token of every task; may only invoke the reader and the backfill function. */
  tasksInvoker: gcp.serviceaccount.Account;
  /** Named in the OIDC token of the Cloud Scheduler job; may only invoke the scheduler function. */
  cronInvoker: gcp.serviceaccount.Account;
  /** Named in the OIDC token of the writer's push subscription (only when one is configured). */
  pushInvoker?: gcp.serviceaccount.Account;
}

/** Creates the accounts; they hold no role until `access.ts` grants one on a single resource. */
export function createAccounts(s: InfraSettings): Accounts {
  const account = (logical: string, accountId: string, what: string) =>
    new gcp.serviceaccount.Account(logical, {
      project: s.project,
      accountId,
      displayName: `sluice ${what}`,
      description: `sluice (${s.prefix}): ${what}`,
    });
  return {
    runtime: {
      scheduler: account('scheduler-sa', s.names.accounts.scheduler, 'scheduler function runtime'),
      reader: account('reader-sa', s.names.accounts.reader, 'reader function runtime'),
      backfill: account('backfill-sa', s.names.accounts.backfill, 'backfill function runtime'),
      writer: account('writer-sa', s.names.accounts.writer, 'writer function runtime'),
    },
    tasksInvoker: account('tasks-invoker-sa', s.names.tasksInvoker, 'Cloud Tasks invoker'),
    cronInvoker: account('cron-invoker-sa', s.names.cronInvoker, 'Cloud Scheduler invoker'),
    ...(s.writer.pubsub
      ? { pushInvoker: account('push-invoker-sa', s.names.pushInvoker, 'Pub/Sub push invoker of the writer') }
      : {}),
  };
}
