/**
 * A reader queue in shards (`sluice:queues.reader.shards`): the queues, their share of the reader's capacity,
 * the grants on each, and the variable that tells the functions where to enqueue.
 */
import { deploymentEnvironment } from '../../infra/settings';
import { parseDeploymentSettings } from '../../shared/wiring/settings';
import { deployed, installMocks, resolved, settingsOf } from './harness';

const recorded = installMocks();

const sharded = () =>
  settingsOf({
    deployment: {
      functions: { reader: { maxInstances: 100, concurrency: 300 } },
      queues: { reader: { shards: 3 } },
    },
  });

let outputs: Awaited<ReturnType<typeof deployed>>['outputs'];
beforeAll(async () => {
  outputs = (await deployed(sharded())).outputs;
});

test('three reader queues, the first under the one-queue names, sharing the reader capacity out', () => {
  const queues = recorded.filter((r) => r.type === 'gcp:cloudtasks/queue:Queue');
  const readers = queues.filter((q) => String(q.name).startsWith('reader-queue'));
  expect(readers.map((q) => [q.name, q.inputs.name])).toEqual([
    ['reader-queue', 'sluice-reader'],
    ['reader-queue-2', 'sluice-reader-2'],
    ['reader-queue-3', 'sluice-reader-3'],
  ]);
  // 100 × 300 = 30,000 requests at once over three queues: 10,000 each, capped at one queue's 5,000.
  for (const q of readers)
    expect(q.inputs.rateLimits).toMatchObject({
      maxDispatchesPerSecond: 100,
      maxConcurrentDispatches: 5_000,
    });
});

test('whoever may enqueue on the reader queue may enqueue on every shard of it', () => {
  const grants = recorded.filter((r) => r.type === 'gcp:cloudtasks/queueIamMember:QueueIamMember');
  const onReaders = grants.filter((g) => String(g.inputs.name).startsWith('sluice-reader'));
  const byQueue = (n: string) =>
    onReaders
      .filter((g) => g.inputs.name === n)
      .map((g) => g.inputs.member)
      .sort();
  expect(byQueue('sluice-reader')).toHaveLength(2);
  expect(byQueue('sluice-reader-2')).toEqual(byQueue('sluice-reader'));
  expect(byQueue('sluice-reader-3')).toEqual(byQueue('sluice-reader'));
});

test('the functions get every shard, in order, and parse them back', async () => {
  const env = deploymentEnvironment(sharded());
  const names = [1, 2, 3].map(
    (i) => `projects/acme-prod/locations/europe-west1/queues/sluice-reader${i === 1 ? '' : `-${i}`}`,
  );
  expect(env.SLUICE_READER_QUEUE).toBe(names.join(','));
  const parsed = parseDeploymentSettings({ SLUICE_READER_URL: 'https://r.example', ...env });
  expect(parsed.readerQueues).toEqual(names);
  expect(await resolved(outputs.readerQueues)).toEqual([
    'sluice-reader',
    'sluice-reader-2',
    'sluice-reader-3',
  ]);
  expect(await resolved(outputs.readerQueue)).toBe('sluice-reader');
});

test('a queue named twice, or a bad name among them, is refused naming the variable', () => {
  const q = 'projects/p/locations/l/queues/a';
  expect(() =>
    parseDeploymentSettings({ SLUICE_READER_URL: 'https://r.example', SLUICE_READER_QUEUE: `${q},${q}` }),
  ).toThrow(/SLUICE_READER_QUEUE.*names a queue twice/s);
  expect(() =>
    parseDeploymentSettings({ SLUICE_READER_URL: 'https://r.example', SLUICE_READER_QUEUE: `${q},queues/b` }),
  ).toThrow(/SLUICE_READER_QUEUE.*comma-separated/s);
});
