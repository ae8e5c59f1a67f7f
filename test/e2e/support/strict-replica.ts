/**
 * A local stack whose customers replica refuses a row sluice must set aside: the replica made by hand with
 * `email` REQUIRED (sluice adds the other columns and keeps this mode), so a customer without an e-mail
 * becomes a dead letter under `SLUICE_ON_BAD_RECORD=dead-letter`.
 */
import { type LocalStack, type LocalStackOptions, startLocalStack } from '../../../local/stack';
import { LOCAL } from '../../../local/stack-config';
import { TEST_STACK } from './local-stack';

/** Creates the customers replica with `email` REQUIRED. */
export async function handMadeReplica(stack: LocalStack): Promise<void> {
  const dataset = stack.emulators.bigquery.bigquery().dataset(LOCAL.dataset);
  await dataset.createTable('customers', {
    schema: {
      fields: [
        { name: 'customer_id', type: 'INT64', mode: 'REQUIRED' },
        { name: 'email', type: 'STRING', mode: 'REQUIRED' },
      ],
    },
    tableConstraints: { primaryKey: { columns: ['customer_id'] } },
  } as never);
}

/**
 * A stack with dead letters on and the strict replica, the pipeline started by its first tick and ticking
 * every 400 ms.
 */
export async function startStrictReplicaStack(options: LocalStackOptions = {}): Promise<LocalStack> {
  const stack = await startLocalStack({
    ...TEST_STACK,
    churnMs: 0,
    ...options,
    functionEnv: { SLUICE_ON_BAD_RECORD: 'dead-letter', ...options.functionEnv },
  });
  await handMadeReplica(stack);
  const first = await stack.tick();
  if (first.status !== 200) throw new Error(`first tick answered ${first.status}`);
  stack.startTicking(400);
  return stack;
}
