/** The Cloud Scheduler job that ticks the scheduler function. */
import * as gcp from '@pulumi/gcp';
import type * as pulumi from '@pulumi/pulumi';
import type { InfraSettings } from '../settings';
import type { Accounts } from './accounts';

/** The run.app URL of a function (its invocation URL, and the audience Cloud Run checks). */
export function serviceUri(fn: gcp.cloudfunctionsv2.Function): pulumi.Output<string> {
  return fn.serviceConfig.apply((c) => c?.uri ?? '');
}

/**
 * Ticks the scheduler with an OIDC token of the cron invoker account. No retries: a missed tick is made
 * good by the next one a minute later, and Cloud Scheduler never runs two executions of a job at once.
 */
export function createSchedulerJob(
  s: InfraSettings,
  scheduler: gcp.cloudfunctionsv2.Function,
  accounts: Accounts,
): gcp.cloudscheduler.Job {
  const uri = serviceUri(scheduler);
  return new gcp.cloudscheduler.Job('tick', {
    name: `${s.prefix}-tick`,
    project: s.project,
    region: s.region,
    description: 'sluice: walk the ledger and enqueue ready partitions',
    schedule: s.schedule.cron,
    timeZone: s.schedule.timeZone,
    attemptDeadline: `${s.schedule.attemptDeadlineSeconds}s`,
    retryConfig: { retryCount: 0 },
    httpTarget: {
      uri,
      httpMethod: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: Buffer.from('{}').toString('base64'),
      oidcToken: { serviceAccountEmail: accounts.cronInvoker.email, audience: uri },
    },
  });
}
