/**
 * `GET /backfills` over the jobs' index (ADR-2308), on the Cloud Storage emulator through the official
 * client: a page costs one listing of the index and, per job on the page, one read and one listing of its
 * done markers — not a listing of every partition object of every job. Pages follow `nextPageToken`, newest
 * first; jobs written before the index existed are indexed once; bad `pageSize` / `pageToken` are 400s
 * naming the field. Requests are counted by the emulator (its admin request counts).
 */
process.env.METADATA_SERVER_DETECTION = 'none';
delete process.env.STORAGE_EMULATOR_HOST;

import { type GcsEmulator, startGcsEmulator } from '../../local/emulators/gcs/emulator';
import { GcsObjectStore } from '../../shared/adapters/gcs/object-store';
import { JobStore } from '../../shared/app/backfill';
import { type BackfillJob, encodeJob, jobObjects } from '../../shared/domain/backfill/job';
import { fromNanos } from '../../shared/domain/timestamp';
import { ordersJob } from '../app/backfill/orders-job';
import { harness } from '../app/backfill/support';
import { type BackfillServer, serveBackfill } from './support/backfill-server';

const PARTITIONS = 120;
const JOBS = 6;
let gcs: GcsEmulator;
let server: BackfillServer | undefined;
let url = '';
const h = harness();

function job(n: number): BackfillJob {
  const at = fromNanos(1_714_557_600_000_000_000n + BigInt(n) * 1_000_000_000n);
  return ordersJob({
    id: `job-${n}`,
    state: 'running',
    snapshot: { transaction: `tx-${n}`, readTimestamp: at },
    partitions: PARTITIONS,
    createdAt: at,
    startedAt: at,
  });
}

/** Writes a job with its partitions and half its done markers; the first two as before the index existed. */
async function seed(): Promise<void> {
  const jobs = new JobStore(h.deps.store, 'demo');
  for (let n = 0; n < JOBS; n++) {
    const j = job(n);
    if (n < 2)
      await h.deps.store.write(jobObjects.job('demo', j.id), encodeJob(j), {
        ifGeneration: 0,
        contentType: 'application/json',
      });
    else await jobs.create(j);
    const parts = Array.from({ length: PARTITIONS }, (_, i) => ({
      index: i,
      table: 'Orders',
      handle: `h${i}`,
    }));
    await jobs.writePartitions(j.id, j.plan, parts, j.createdAt);
    for (let i = 0; i < PARTITIONS / 2; i++) await jobs.markDone(j.id, i, 1, j.createdAt);
  }
}

async function get(query: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${url}/backfills${query}`);
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

const ids = (body: Record<string, unknown>) => (body.backfills as Array<{ id: string }>).map((b) => b.id);

beforeAll(async () => {
  gcs = await startGcsEmulator({ port: 0 });
  gcs.admin.createBucket('ledger');
  h.deps.store = new GcsObjectStore(gcs.storage().bucket('ledger'));
  server = await serveBackfill(h.deps);
  url = server.url;
  await seed();
}, 120_000);

afterAll(async () => {
  await server?.close();
  await gcs?.stop();
});

it('indexes the older jobs once, then a page reads only the jobs on it', async () => {
  const first = await get('');
  expect(first.status).toBe(200);
  // Default page size 50: every job, newest first, the two written before the index included.
  expect(ids(first.body)).toEqual(['job-5', 'job-4', 'job-3', 'job-2', 'job-1', 'job-0']);
  expect(first.body.nextPageToken).toBeUndefined();
  expect((first.body.backfills as Array<{ partitions: { done: number } }>)[0]!.partitions.done).toBe(60);
  gcs.admin.resetRequests();
  const page = await get('?pageSize=2');
  expect(ids(page.body)).toEqual(['job-5', 'job-4']);
  // Reads: the index marker and the two jobs (each a metadata get and a media download); listings: the
  // index and each job's done markers. Every partition object of the six jobs (720) stays unlisted.
  expect(gcs.admin.requests()).toEqual({ 'objects.get': 3, 'objects.download': 3, 'objects.list': 3 });
});

it('follows nextPageToken to the oldest job, and a state change shows in the listing', async () => {
  const seen: string[] = [];
  let token: string | undefined;
  let pages = 0;
  do {
    const page = await get(`?pageSize=4${token ? `&pageToken=${encodeURIComponent(token)}` : ''}`);
    expect(page.status).toBe(200);
    seen.push(...ids(page.body));
    token = page.body.nextPageToken as string | undefined;
    pages++;
  } while (token);
  expect(pages).toBe(2);
  expect(seen).toEqual(['job-5', 'job-4', 'job-3', 'job-2', 'job-1', 'job-0']);
  const cancelled = await fetch(`${url}/backfills/job-1`, {
    method: 'DELETE',
    headers: { 'content-type': 'application/json' },
  });
  expect(cancelled.status).toBe(200);
  const listed = (await get('')).body.backfills as Array<{ id: string; state: string }>;
  expect(listed.find((b) => b.id === 'job-1')?.state).toBe('cancelled');
});

it('refuses a bad pageSize or pageToken with a 400 naming the field', async () => {
  for (const size of ['0', '101', 'ten', '2.5']) {
    const a = await get(`?pageSize=${size}`);
    expect(a.status).toBe(400);
    expect((a.body.error as { message: string }).message).toMatch(/^pageSize: /);
  }
  const a = await get('?pageToken=not-one-of-ours');
  expect(a.status).toBe(400);
  expect((a.body.error as { message: string }).message).toMatch(/^pageToken: /);
});
