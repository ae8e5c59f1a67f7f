/**
 * What the client library's own system test exercises, written through the unmodified client: bucket
 * configuration (labels, storage class, autoclass, versioning) with PATCH, bucket listing by prefix, object
 * versions, gzip content encoding, client-sent hashes, custom-metadata limits, `fields` and `matchGlob`
 * listings, and the resumable status query.
 */
process.env['METADATA_SERVER_DETECTION'] = 'none';
delete process.env['STORAGE_EMULATOR_HOST'];

import { gunzipSync, gzipSync } from 'node:zlib';
import { type ApiError, CRC32C, Storage } from '@google-cloud/storage';
import { rejection } from '../common/rejection';
import { gcsForFile } from './support/gcs-for-file';

const gcs = gcsForFile({ buckets: ['plain'] }, { retryOptions: { maxRetries: 0 } });

test('bucket PATCH merges labels, removes them with null, and changes storage class and autoclass', async () => {
  const [bucket] = await gcs.storage.createBucket('meta-bkt', {
    autoclass: { enabled: true, terminalStorageClass: 'ARCHIVE' },
  });
  let [m] = await bucket.getMetadata();
  expect(m.storageClass).toBe('STANDARD');
  expect(m.autoclass).toMatchObject({ enabled: true, terminalStorageClass: 'ARCHIVE' });
  const enabledAt = m.autoclass?.toggleTime as string;
  [m] = await bucket.setMetadata({ labels: { a: '1', b: '2' }, autoclass: { enabled: false } });
  expect(m.labels).toEqual({ a: '1', b: '2' });
  expect((m.autoclass?.toggleTime as string) > enabledAt).toBe(true);
  await bucket.setMetadata({ labels: { a: null, c: '3' } });
  await bucket.setStorageClass('coldline');
  [m] = await bucket.getMetadata();
  expect(m.labels).toEqual({ b: '2', c: '3' });
  expect(m.storageClass).toBe('COLDLINE');
  expect(Number(m.metageneration)).toBe(4);
  await bucket.setMetadata({ labels: { b: null, c: null } });
  [m] = await bucket.getMetadata();
  expect(m.labels).toBeUndefined();
  expect(m.versioning).toBeUndefined();
  const [listed] = await gcs.storage.getBuckets({ prefix: 'meta-' });
  expect(listed.map((b) => b.name)).toEqual(['meta-bkt']);
});

test('a versioned bucket keeps overwritten and deleted generations', async () => {
  const [bucket] = await gcs.storage.createBucket('versioned-bkt', { versioning: { enabled: true } });
  expect(bucket.metadata.versioning).toEqual({ enabled: true });
  const file = bucket.file('doc');
  await file.save('a', { resumable: false });
  const [first] = await file.getMetadata();
  await file.save('b', { resumable: false });
  const old = bucket.file('doc', { generation: first.generation as string });
  expect((await old.download())[0].toString()).toBe('a');
  expect((await file.download())[0].toString()).toBe('b');
  await file.delete();
  expect((await file.exists())[0]).toBe(false);
  const [versions] = await bucket.getFiles({ versions: true });
  expect(versions.map((f) => f.name)).toEqual(['doc', 'doc']);
  expect(versions.every((f) => f.metadata.timeDeleted !== undefined)).toBe(true);
  expect((await rejection<ApiError>(bucket.delete())).code).toBe(409);
  await bucket.deleteFiles({ versions: true });
  expect((await bucket.getFiles({ versions: true }))[0]).toEqual([]);
  await bucket.delete();
});

test('gzip-stored objects: served compressed with Content-Encoding to gzip clients, decompressed otherwise', async () => {
  const text = 'hello gzip '.repeat(500);
  const file = gcs.storage.bucket('plain').file('page.html');
  await file.save(gzipSync(text), {
    resumable: false,
    metadata: { contentEncoding: 'gzip', contentType: 'text/html' },
  });
  expect((await file.download())[0].toString()).toBe(text);
  const url = `${gcs.emulator.url}/storage/v1/b/plain/o/page.html?alt=media`;
  const compressed = await fetch(url, { headers: { 'accept-encoding': 'gzip' } });
  expect(compressed.headers.get('content-encoding')).toBe('gzip');
  const identity = await fetch(url, { headers: { 'accept-encoding': 'identity' } });
  expect(identity.headers.get('content-encoding')).toBeNull();
  expect(identity.headers.get('x-goog-stored-content-encoding')).toBe('gzip');
  expect(await identity.text()).toBe(text);
  await gcs.storage.bucket('plain').upload(__filename, { destination: 'self.ts', gzip: true });
  const [copy] = await gcs.storage.bucket('plain').file('self.ts').download();
  expect(copy.toString()).toContain('served compressed with Content-Encoding');
  expect(gunzipSync(gcs.emulator.admin.read('plain', 'self.ts') as Buffer).toString()).toBe(copy.toString());
});

test('hashes the client sends are checked, and nothing is stored on a mismatch', async () => {
  const file = gcs.storage.bucket('plain').file('hashed');
  const wrong = await rejection<ApiError>(
    file.save('data', { resumable: false, metadata: { crc32c: 'AAAAAA==' } }),
  );
  expect(wrong.code).toBe(400);
  expect(wrong.message).toMatch(/Provided CRC32C "AAAAAA==" doesn't match calculated CRC32C/);
  expect((await file.exists())[0]).toBe(false);
  const crc = new CRC32C();
  crc.update(Buffer.from('data'));
  await file.save('data', { resumable: false, metadata: { crc32c: crc.toString() } });
  expect((await file.getMetadata())[0].crc32c).toBe(crc.toString());
  const md5 = await rejection<ApiError>(
    file.save('data', { resumable: false, metadata: { md5Hash: 'AAAAAAAAAAAAAAAAAAAAAA==' } }),
  );
  expect(md5.message).toMatch(/Provided MD5 hash/);
});

test('custom metadata is limited as the service limits it', async () => {
  const file = gcs.storage.bucket('plain').file('meta');
  const tooBig = { metadata: { a: 'x'.repeat(4000), b: 'y'.repeat(4000), c: 'z'.repeat(400) } };
  expect((await rejection<ApiError>(file.save('v', { resumable: false, metadata: tooBig }))).code).toBe(400);
  const oneValue = { metadata: { a: 'x'.repeat(4097) } };
  expect((await rejection<ApiError>(file.save('v', { resumable: false, metadata: oneValue }))).code).toBe(
    400,
  );
  const huge = { metadata: { custom: 'x'.repeat(2_100_000) } };
  const err = await rejection<Error>(file.save('v', { resumable: false, metadata: huge }));
  expect(err.message).toMatch(/Metadata part is too large/);
  await file.save('v', {
    resumable: false,
    metadata: { metadata: { a: 'x'.repeat(4000), b: 'y'.repeat(4000) } },
  });
});

test('listing with fields=items(name) and matchGlob', async () => {
  const bucket = gcs.storage.bucket('plain');
  const names = [
    'glob/CloudLogo1',
    'glob/CloudLogo2',
    'glob/dir/CloudLogo3',
    'glob/dir/inner/CloudLogo4',
    'glob/other',
  ];
  for (const n of names) await bucket.file(n).save('x', { resumable: false });
  const [only] = await bucket.getFiles({ prefix: 'glob/', fields: 'items(name)' });
  expect(only).toEqual(names.map((name) => ({ name })));
  const [top] = await bucket.getFiles({ matchGlob: 'glob/CloudLogo*' });
  expect(top.map((f) => f.name)).toEqual(['glob/CloudLogo1', 'glob/CloudLogo2']);
  const [deep] = await bucket.getFiles({ matchGlob: 'glob/**/CloudLogo*' });
  expect(deep.map((f) => f.name)).toEqual(names.slice(0, 4));
  const [alt] = await bucket.getFiles({ matchGlob: 'glob/{other,CloudLogo[2]}' });
  expect(alt.map((f) => f.name)).toEqual(['glob/CloudLogo2', 'glob/other']);
});

test('the resumable status query answers 308 with content-length 0 and the stored range', async () => {
  const start = await fetch(`${gcs.emulator.url}/upload/storage/v1/b/plain/o?uploadType=resumable&name=r`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{}',
  });
  const session = start.headers.get('location') as string;
  const status = await fetch(session, { method: 'PUT', headers: { 'content-range': 'bytes */*' } });
  expect(status.status).toBe(308);
  expect(status.headers.get('content-length')).toBe('0');
  expect(status.headers.get('range')).toBeNull();
  await fetch(session, { method: 'PUT', headers: { 'content-range': 'bytes 0-3/*' }, body: 'abcd' });
  const after = await fetch(session, { method: 'PUT', headers: { 'content-range': 'bytes */*' } });
  expect([after.status, after.headers.get('content-length'), after.headers.get('range')]).toEqual([
    308,
    '0',
    'bytes=0-3',
  ]);
  await fetch(session, { method: 'PUT', headers: { 'content-range': 'bytes 4-5/6' }, body: 'ef' });
  expect(gcs.emulator.admin.read('plain', 'r')?.toString()).toBe('abcdef');
});

test('a client pointed with STORAGE_EMULATOR_HOST sees the same versions', async () => {
  process.env['STORAGE_EMULATOR_HOST'] = gcs.emulator.url;
  const viaEnv = new Storage({ projectId: 'test' });
  delete process.env['STORAGE_EMULATOR_HOST'];
  const [files] = await viaEnv
    .bucket('plain')
    .getFiles({ prefix: 'glob/', maxResults: 2, autoPaginate: false });
  expect(files).toHaveLength(2);
});
