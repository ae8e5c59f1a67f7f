/**
 * The GCS emulator's transport surface through the unmodified client: resumable and media uploads, the
 * `STORAGE_EMULATOR_HOST` URL shape, the per-object write-rate limit, injected faults (client retries, a lost
 * response turning into 412 on retry), copy and compose, buckets.
 */
process.env['METADATA_SERVER_DETECTION'] = 'none';
delete process.env['STORAGE_EMULATOR_HOST'];

import { type ApiError, Storage } from '@google-cloud/storage';
import { type GcsEmulator, startGcsEmulator } from '../../../local/emulators/gcs/emulator';
import { rejection } from '../common/rejection';

let emulator: GcsEmulator;
let storage: Storage;
const fastRetry = { retryOptions: { retryDelayMultiplier: 1.1, maxRetryDelay: 2 } };

beforeAll(async () => {
  emulator = await startGcsEmulator({ port: 0, buckets: ['bkt1'] });
  storage = emulator.storage(fastRetry);
});
afterAll(() => emulator.stop());
afterEach(() => {
  emulator.admin.clearFaults();
  emulator.admin.setMinWriteIntervalMs(0);
});

test('resumable upload (the client default) with a precondition, then download', async () => {
  const data = Buffer.alloc(300_000, 7);
  const f = storage.bucket('bkt1').file('big.bin');
  await f.save(data, { preconditionOpts: { ifGenerationMatch: 0 } });
  expect((await f.download())[0].equals(data)).toBe(true);
  expect((await rejection<ApiError>(f.save(data, { preconditionOpts: { ifGenerationMatch: 0 } }))).code).toBe(
    412,
  );
});

test('media upload and the /download route', async () => {
  const res = await fetch(`${emulator.url}/upload/storage/v1/b/bkt1/o?uploadType=media&name=m%2Fraw`, {
    method: 'POST',
    headers: { 'content-type': 'text/plain' },
    body: 'raw bytes',
  });
  expect(res.status).toBe(200);
  const [meta] = await storage.bucket('bkt1').file('m/raw').getMetadata();
  expect(meta.contentType).toBe('text/plain');
  const dl = await fetch(`${emulator.url}/download/storage/v1/b/bkt1/o/m%2Fraw?alt=media`);
  expect(await dl.text()).toBe('raw bytes');
});

test('STORAGE_EMULATOR_HOST (JSON routes at the root) works as well as apiEndpoint', async () => {
  process.env['STORAGE_EMULATOR_HOST'] = emulator.url;
  const viaEnv = new Storage({ projectId: 'test' });
  delete process.env['STORAGE_EMULATOR_HOST'];
  const f = viaEnv.bucket('bkt1').file('env/x');
  await f.save('env', { resumable: false, preconditionOpts: { ifGenerationMatch: 0 } });
  expect((await f.download())[0].toString()).toBe('env');
  const [files] = await viaEnv.bucket('bkt1').getFiles({ prefix: 'env/' });
  expect(files.map((x) => x.name)).toEqual(['env/x']);
});

test('the per-object write limit answers 429; the client retries a conditional write through it', async () => {
  emulator.admin.setMinWriteIntervalMs(300);
  // A fresh client: an unconditional save() switches retries off for its whole Storage instance (see below).
  const client = emulator.storage(fastRetry);
  const f = client.bucket('bkt1').file('hot');
  await f.save('1', { resumable: false, preconditionOpts: { ifGenerationMatch: 0 } });
  const [meta] = await f.getMetadata();
  const noRetry = emulator
    .storage({ retryOptions: { autoRetry: false } })
    .bucket('bkt1')
    .file('hot');
  const limited = await rejection<ApiError>(
    noRetry.save('2', { resumable: false, preconditionOpts: { ifGenerationMatch: String(meta.generation) } }),
  );
  expect(limited.code).toBe(429);
  expect(limited.errors?.[0]?.reason).toBe('rateLimitExceeded');
  await f.save('3', { resumable: false, preconditionOpts: { ifGenerationMatch: String(meta.generation) } });
  expect((await f.download())[0].toString()).toBe('3');
});

test('faults: a 503 on a read is retried; a drop after the write took effect turns the retry into 412', async () => {
  const client = emulator.storage(fastRetry);
  const f = client.bucket('bkt1').file('ledger/p1');
  await f.save('v1', { resumable: false, preconditionOpts: { ifGenerationMatch: 0 } });
  emulator.admin.fail({ method: 'objects.get', times: 1, code: 503 });
  const [meta] = await f.getMetadata();
  expect(emulator.admin.faults()[0]?.fired).toBe(1);
  // The write is applied, its answer lost; the client retries the conditional write and loses to itself.
  emulator.admin.fail({ method: 'objects.insert', times: 1, afterItems: 1, drop: true });
  const err = await rejection<ApiError>(
    f.save('v2', { resumable: false, preconditionOpts: { ifGenerationMatch: String(meta.generation) } }),
  );
  expect(err.code).toBe(412);
  expect(emulator.admin.read('bkt1', 'ledger/p1')?.toString()).toBe('v2');
});

test('client quirk: an unconditional save() leaves its Storage instance with retries off', async () => {
  const client = emulator.storage(fastRetry);
  await client.bucket('bkt1').file('quirk').save('x', { resumable: false });
  expect(client.retryOptions.autoRetry).toBe(false);
  emulator.admin.fail({ method: 'objects.get', times: 1, code: 503 });
  expect((await rejection<ApiError>(client.bucket('bkt1').file('quirk').getMetadata())).code).toBe(503);
});

test('faults: an unconditional write is not retried by the client', async () => {
  emulator.admin.fail({ method: 'objects.insert', times: 1, code: 503 });
  const err = await rejection<ApiError>(storage.bucket('bkt1').file('once').save('x', { resumable: false }));
  expect(err.code).toBe(503);
  expect(emulator.admin.read('bkt1', 'once')).toBeUndefined();
});

test('copy and compose produce new objects with correct hashes', async () => {
  const bucket = storage.bucket('bkt1');
  await bucket.file('c/a').save('hello ', { resumable: false });
  await bucket.file('c/b').save('world', { resumable: false });
  await bucket.file('c/a').copy(bucket.file('c/a-copy'));
  expect((await bucket.file('c/a-copy').download())[0].toString()).toBe('hello ');
  await bucket.combine(['c/a', 'c/b'], 'c/ab');
  const [joined] = await bucket.file('c/ab').download({ validation: 'crc32c' });
  expect(joined.toString()).toBe('hello world');
});

test('buckets: create, get, refuse to delete when not empty, delete', async () => {
  const [bucket] = await storage.createBucket('b-temp');
  expect((await bucket.exists())[0]).toBe(true);
  await bucket.file('x').save('x', { resumable: false });
  expect((await rejection<ApiError>(bucket.delete())).code).toBe(409);
  await bucket.file('x').delete();
  await bucket.delete();
  expect((await bucket.exists())[0]).toBe(false);
  expect((await rejection<ApiError>(storage.bucket('b-temp').file('y').getMetadata())).code).toBe(404);
});
