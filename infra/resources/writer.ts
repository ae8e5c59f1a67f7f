/**
 * The writer's optional Pub/Sub push subscription: messages of the configured topic are pushed to
 * `POST <writer>/mutations` with an OIDC token of the push invoker account. A non-2xx answer (a record the
 * writer could not apply or route) is redelivered with backoff, and after `maxDeliveryAttempts` moved to the
 * dead-letter topic when one is configured, instead of being redelivered forever.
 */
import * as gcp from '@pulumi/gcp';
import * as pulumi from '@pulumi/pulumi';
import type { InfraSettings } from '../settings';
import type { Accounts } from './accounts';
import { serviceUri } from './schedule';

/** Creates the subscription, or nothing when `sluice:writer.pubsub` is not set. */
export function createWriterSubscription(
  s: InfraSettings,
  writer: gcp.cloudfunctionsv2.Function,
  accounts: Accounts,
): gcp.pubsub.Subscription | undefined {
  const p = s.writer.pubsub;
  if (!p || !accounts.pushInvoker) return undefined;
  const uri = serviceUri(writer);
  return new gcp.pubsub.Subscription('writer-push', {
    name: `${s.prefix}-writer`,
    project: s.project,
    topic: p.topic,
    ackDeadlineSeconds: p.ackDeadlineSeconds,
    pushConfig: {
      pushEndpoint: pulumi.interpolate`${uri}/mutations`,
      oidcToken: { serviceAccountEmail: accounts.pushInvoker.email, audience: uri },
    },
    retryPolicy: { minimumBackoff: `${p.minBackoffSeconds}s`, maximumBackoff: `${p.maxBackoffSeconds}s` },
    ...(p.deadLetterTopic
      ? {
          deadLetterPolicy: {
            deadLetterTopic: p.deadLetterTopic,
            maxDeliveryAttempts: p.maxDeliveryAttempts,
          },
        }
      : {}),
    // An idle subscription must not expire (the default is 31 days without activity).
    expirationPolicy: { ttl: '' },
    labels: { app: 'sluice', function: 'writer' },
  });
}
