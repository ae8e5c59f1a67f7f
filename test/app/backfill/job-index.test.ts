/**
 * The jobs' index (ADR-2308) never hides a job that exists: whichever of its writes Cloud Storage fails (503
 * on any request, gcp-platform.md §1.5), every job object in the bucket is listed by `GET /backfills`.
 */
import { listBackfills, startBackfill } from '../../../shared/app/backfill';
import { jobObjects } from '../../../shared/domain/backfill/job';
import { listAll } from '../../../shared/ports/object-store';
import { harness, seedOrders } from './support';

const unavailable = () => Object.assign(new Error('HTTP 503'), { code: 503 });

async function jobIdsInBucket(h: ReturnType<typeof harness>): Promise<string[]> {
  const { items } = await listAll(h.store, jobObjects.prefix('demo'));
  return items
    .filter((i) => i.name.endsWith('/job.json'))
    .map((i) => i.name.split('/').at(-2) ?? '')
    .sort();
}

describe('a backfill whose index write fails', () => {
  it.each([1, 2, 3])('index write %i failing: every job in the bucket is still listed', async (failAt) => {
    const h = harness();
    seedOrders(h, 3);
    // The index exists already (a listing built it), so nothing re-indexes the bucket behind the failure.
    expect((await listBackfills(h.deps)).backfills).toEqual([]);
    let indexWrites = 0;
    h.store.failNextWrite(
      (name) => name.includes('/backfill-index/') && ++indexWrites === failAt,
      unavailable(),
    );
    await startBackfill(h.deps, { tables: ['Orders'] }).catch(() => undefined);
    const listed = (await listBackfills(h.deps)).backfills.map((b) => b.id).sort();
    expect(listed).toEqual(await jobIdsInBucket(h));
  });
});
