/** The HTTP edge of the scheduler and reader functions, over in-memory ports. */
process.env.METADATA_SERVER_DETECTION = 'none';

import { createReaderHandler } from '../../functions/reader';
import { createSchedulerHandler } from '../../functions/scheduler';
import { ConfigError } from '../../shared/domain/config';
import { createLogger } from '../../shared/domain/log';
import { addMillis, formatTimestamp } from '../../shared/domain/timestamp';
import { assembleApp, createAppFromEnv, parseEnvironment } from '../../shared/wiring/app';
import { Harness, T0 } from '../app/support/harness';
import { fakeRequest, fakeResponse, PIPELINE_ENV } from './support/fakes';

const request = fakeRequest;
const response = fakeResponse;

function setup() {
  const h = new Harness();
  const lines: Array<Record<string, unknown>> = [];
  const log = createLogger((l) => lines.push(JSON.parse(l) as Record<string, unknown>), {
    pipeline: 'sluice',
  });
  const app = assembleApp({ ...h.ports(), store: h.store }, h.settings, { now: () => h.now, log });
  return {
    h,
    app,
    lines,
    reader: createReaderHandler(() => app),
    scheduler: createSchedulerHandler(() => app),
  };
}

const ENV = PIPELINE_ENV;

describe('scheduler function', () => {
  it('ticks on POST and answers GET /status with the status object', async () => {
    const { scheduler, h } = setup();
    const before = response();
    await scheduler(request('GET', '/status'), before);
    expect(before.body).toMatchObject({ state: 'uninitialised' });
    const tick = response();
    await scheduler(request('POST', '/'), tick);
    expect(tick.code).toBe(200);
    expect(h.queue.pending).toHaveLength(2);
    const status = response();
    await scheduler(request('GET', '/status'), status);
    expect(status.body).toMatchObject({ state: 'running', partitions: { ready: 2 }, epoch: 0 });
    expect(status.body).toHaveProperty('watermark', formatTimestamp((addMillis(T0, -0) - 1n) as typeof T0));
  });

  it('answers a refused stream with status stopped and the reason naming the fix, which GET /status shows', async () => {
    const { scheduler, h } = setup();
    h.catalog.scope = undefined;
    const res = response();
    await scheduler(request('POST', '/'), res);
    expect(res.code).toBe(200);
    expect(res.body).toMatchObject({ state: 'stopped' });
    expect(JSON.stringify(res.body)).toMatch(/does not exist/);
    const status = response();
    await scheduler(request('GET', '/status'), status);
    expect(status.body).toMatchObject({ state: 'stopped', reason: expect.stringMatching(/does not exist/) });
  });
});

describe('reader function', () => {
  it('runs a task from Cloud Tasks, logging the task name and attempt', async () => {
    const { reader, h, lines } = setup();
    await h.tick();
    const [task] = h.queue.drain();
    const res = response();
    const headers = { 'X-CloudTasks-TaskName': task!.id, 'X-CloudTasks-TaskRetryCount': '2' };
    await reader(request('POST', '/', task!.body, headers), res);
    expect(res.code).toBe(200);
    expect(res.body).toMatchObject({ outcome: 'window' });
    const start = lines.find((l) => l.message === 'task.start')!;
    expect(start['logging.googleapis.com/labels']).toMatchObject({ task: task!.id, attempt: '3' });
  });

  it('answers a malformed body 400 on the first attempt and 200 on redelivery, so it is not retried forever', async () => {
    const { reader, lines } = setup();
    const first = response();
    await reader(request('POST', '/', { partition: 'nope' }), first);
    expect(first.code).toBe(400);
    expect(JSON.stringify(first.body)).toMatch(/partition: must be a partition id/);
    const again = response();
    await reader(request('POST', '/', 'not json', { 'X-CloudTasks-TaskRetryCount': '1' }), again);
    expect(again.code).toBe(200);
    expect(lines.filter((l) => l.message === 'task.malformed')).toHaveLength(2);
  });

  it('answers an unknown partition 200 (dropped), and a retryable failure 503', async () => {
    const { reader, h } = setup();
    await h.tick();
    const unknown = response();
    const body = { pipeline: 'sluice', epoch: 0, partition: 'a'.repeat(32), position: formatTimestamp(T0) };
    await reader(request('POST', '/', JSON.stringify(body)), unknown);
    expect(unknown.code).toBe(200);
    expect(unknown.body).toMatchObject({ outcome: 'noop' });
    const [task] = h.queue.drain();
    h.replica.faults.fail(1, 14);
    h.script.commit(addMillis(T0, 1), [
      { table: 'Orders', id: 0, val: 'x' },
      { table: 'Orders', id: 8, val: 'y' },
    ]);
    h.advance(1_000);
    const res = response();
    await reader(request('POST', '/', task!.body), res);
    const retry = response();
    h.replica.faults.fail(1, 8);
    const [task2] = [...h.queue.drain(), task!];
    await reader(request('POST', '/', task2!.body), retry);
    expect([res.code, retry.code].some((c) => c === 503 || c === 429)).toBe(true);
  });

  it('answers health checks without configuration', async () => {
    const res = response();
    await createReaderHandler(() => {
      throw new Error('unused');
    })(request('GET', '/healthz'), res);
    expect(res.code).toBe(200);
  });
});

describe('configuration at startup', () => {
  it('an invalid configuration is one clear error naming every bad variable', () => {
    const bad = { ...ENV, SLUICE_PROJECT: 'X', SLUICE_READER_URL: '', SLUICE_RETENTION_MARGIN_MS: 'soon' };
    expect(() => parseEnvironment(bad)).toThrow(ConfigError);
    expect(() => createAppFromEnv(bad)).toThrow(/project \(SLUICE_PROJECT\)/);
    expect(() => createAppFromEnv(bad)).toThrow(/SLUICE_READER_URL: is required/);
    expect(() => createAppFromEnv(bad)).toThrow(
      /SLUICE_RETENTION_MARGIN_MS: must be a whole number of milliseconds/,
    );
  });

  it('a valid environment parses, with defaults for the deployment settings', () => {
    const { config, deployment } = parseEnvironment(ENV);
    expect(config.pipeline).toBe('sluice');
    expect(deployment).toMatchObject({
      retentionMarginMs: 21_600_000,
      requestPriority: 'low',
      idleDelayMs: 30_000,
    });
  });

  it('a failing app construction is answered 503 by the reader (retried once the deployment is fixed)', async () => {
    const res = response();
    await createReaderHandler(() => createAppFromEnv({}))(request('POST', '/', {}), res);
    expect(res.code).toBe(503);
    expect(JSON.stringify(res.body)).toMatch(/invalid configuration/);
  });
});
