/**
 * Conformance of the GCS emulator with the ledger recipe, through the unmodified `@google-cloud/storage`
 * client: read, write-if-unchanged, create-only, 412 on a lost race, metadata preconditions, listing with
 * custom metadata.
 */
process.env['METADATA_SERVER_DETECTION'] = 'none';
delete process.env['STORAGE_EMULATOR_HOST'];

import type { ApiError, File, GetFilesOptions } from '@google-cloud/storage';
import { rejection } from '../common/rejection';
import { gcsForFile } from './support/gcs-for-file';

const gcs = gcsForFile({ buckets: ['ledger'] });

const opts = { resumable: false, contentType: 'application/json' } as const;

describe('ledger recipe', () => {
  const file = () => gcs.storage.bucket('ledger').file('p/partition-1.json');

  test('create-only succeeds once, then answers 412 conditionNotMet', async () => {
    await file().save('{"v":1}', { ...opts, preconditionOpts: { ifGenerationMatch: 0 } });
    const err = await rejection<ApiError>(
      file().save('{"v":2}', { ...opts, preconditionOpts: { ifGenerationMatch: 0 } }),
    );
    expect(err.code).toBe(412);
    expect(err.errors?.[0]?.reason).toBe('conditionNotMet');
    const [buf] = await file().download();
    expect(buf.toString()).toBe('{"v":1}');
  });

  test('write-if-unchanged moves the generation forward; a stale generation loses with 412', async () => {
    const [meta] = await file().getMetadata();
    const before = BigInt(String(meta.generation));
    expect(meta.metageneration).toBe('1');
    expect(meta.size).toBe('7');
    await file().save('{"v":3}', {
      ...opts,
      preconditionOpts: { ifGenerationMatch: String(meta.generation) },
    });
    const [after] = await file().getMetadata();
    expect(BigInt(String(after.generation))).toBeGreaterThan(before);
    const lost = await rejection<ApiError>(
      file().save('{"v":4}', { ...opts, preconditionOpts: { ifGenerationMatch: String(meta.generation) } }),
    );
    expect(lost.code).toBe(412);
    expect((await file().download())[0].toString()).toBe('{"v":3}');
  });

  test('metadata patch counts metagenerations and honours ifMetagenerationMatch', async () => {
    const [meta] = await file().getMetadata();
    await file().setMetadata(
      { metadata: { position: '10' } },
      { ifMetagenerationMatch: Number(meta.metageneration) },
    );
    const [patched] = await file().getMetadata();
    expect(patched.metageneration).toBe('2');
    expect(patched.generation).toBe(meta.generation);
    expect(patched.metadata).toEqual({ position: '10' });
    const err = await rejection<ApiError>(
      file().setMetadata({ metadata: { position: '11' } }, { ifMetagenerationMatch: 1 }),
    );
    expect(err.code).toBe(412);
    const notMatch = await rejection<ApiError>(file().getMetadata({ ifMetagenerationNotMatch: 2 }));
    expect(notMatch.code).toBe(412);
  });

  test('reads take preconditions too, and 404 notFound for a missing object', async () => {
    const [meta] = await file().getMetadata();
    const [ok] = await file().getMetadata({ ifGenerationMatch: String(meta.generation) });
    expect(ok.generation).toBe(meta.generation);
    expect((await rejection<ApiError>(file().getMetadata({ ifGenerationMatch: 1 }))).code).toBe(412);
    const missing = await rejection<ApiError>(gcs.storage.bucket('ledger').file('nope').getMetadata());
    expect(missing.code).toBe(404);
    expect(missing.errors?.[0]?.reason).toBe('notFound');
    expect((await gcs.storage.bucket('ledger').file('nope').exists())[0]).toBe(false);
  });

  test('ifGenerationNotMatch=0 means "must exist"', async () => {
    const ghost = gcs.storage.bucket('ledger').file('ghost');
    expect(
      (await rejection<ApiError>(ghost.save('x', { ...opts, preconditionOpts: { ifGenerationNotMatch: 0 } })))
        .code,
    ).toBe(412);
    await file().save('{"v":5}', { ...opts, preconditionOpts: { ifGenerationNotMatch: 0 } });
  });

  test('conditional delete', async () => {
    const f = gcs.storage.bucket('ledger').file('tmp/x');
    await f.save('x', opts);
    const [meta] = await f.getMetadata();
    expect((await rejection<ApiError>(f.delete({ ifGenerationMatch: 1 }))).code).toBe(412);
    await f.delete({ ifGenerationMatch: String(meta.generation) });
    expect((await rejection<ApiError>(f.delete())).code).toBe(404);
  });

  test('download carries correct hashes and metadata reports crc32c/md5', async () => {
    const data = Buffer.from('hello ledger');
    const f = gcs.storage.bucket('ledger').file('hash');
    await f.save(data, { resumable: false, validation: 'md5' });
    const [meta] = await f.getMetadata();
    expect(meta.md5Hash).toBe(require('node:crypto').createHash('md5').update(data).digest('base64'));
    const [got] = await f.download({ validation: 'crc32c' });
    expect(got.equals(data)).toBe(true);
    const res = await fetch(`${gcs.emulator.url}/storage/v1/b/ledger/o/hash?alt=media`);
    expect(res.headers.get('x-goog-hash')).toBe(`crc32c=${meta.crc32c},md5=${meta.md5Hash}`);
  });
});

describe('listing', () => {
  beforeAll(async () => {
    const bucket = gcs.storage.bucket('ledger');
    for (const name of ['l/a', 'l/b', 'l/c/1', 'l/c/2', 'l/d', 'm/x']) {
      await bucket
        .file(name)
        .save(name, { resumable: false, metadata: { metadata: { state: `s-${name}` } } });
    }
  });

  test('items carry custom metadata; prefix and delimiter fold sub-folders', async () => {
    const [files, , response] = await gcs.storage
      .bucket('ledger')
      .getFiles({ prefix: 'l/', delimiter: '/', autoPaginate: false });
    expect(files.map((f) => f.name)).toEqual(['l/a', 'l/b', 'l/d']);
    expect(files[0]?.metadata.metadata).toEqual({ state: 's-l/a' });
    expect((response as { prefixes?: string[] }).prefixes).toEqual(['l/c/']);
  });

  test('maxResults pages through everything exactly once', async () => {
    const seen: string[] = [];
    let query: GetFilesOptions | null = { prefix: 'l/', maxResults: 2, autoPaginate: false };
    for (let i = 0; i < 10 && query; i++) {
      const [files, next]: [File[], GetFilesOptions | null, unknown] = await gcs.storage
        .bucket('ledger')
        .getFiles(query);
      expect(files.length).toBeLessThanOrEqual(2);
      seen.push(...files.map((f) => f.name));
      query = next;
    }
    expect(seen).toEqual(['l/a', 'l/b', 'l/c/1', 'l/c/2', 'l/d']);
    const [all] = await gcs.storage.bucket('ledger').getFiles({ prefix: 'l/', maxResults: 2 });
    expect(all).toHaveLength(2);
  });

  test('startOffset / endOffset bound the names', async () => {
    const [files] = await gcs.storage.bucket('ledger').getFiles({ startOffset: 'l/b', endOffset: 'l/d' });
    expect(files.map((f) => f.name)).toEqual(['l/b', 'l/c/1', 'l/c/2']);
  });
});
