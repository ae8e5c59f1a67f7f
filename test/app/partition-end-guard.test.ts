/**
 * Ending a partition (`endPartition`): the stalled reader's guard before any child is created (another
 * reader's lease, an expired lease, a lease given back, an entry gone, a parent already finished), and a
 * finishing write that is refused.
 */
import { endPartition } from '../../shared/app/replication/reader/partition-end';
import { isFatal, SluiceError } from '../../shared/domain/errors';
import { releaseLease } from '../../shared/domain/ledger';
import { addMillis } from '../../shared/domain/timestamp';
import {
  C1,
  C2,
  EPOCH,
  LEASE_MS,
  P,
  rejection,
  rootLeased,
  split,
  T,
  world,
} from './support/partition-end-world';

describe('endPartition: the stalled reader finds its parent changed before creating children', () => {
  it('a parent now leased by another reader: a conflict, no child created, nothing enqueued', async () => {
    const w = world();
    await w.roots('p');
    const stale = await w.lease('p', 'r1');
    // r1 stalled past its lease; r2 took the partition over.
    const taken = await w.lease('p', 'r2', addMillis(T, LEASE_MS + 1_000));
    const err = await rejection(
      endPartition(w.args('r1', addMillis(T, LEASE_MS + 2_000)), stale, split('p', 'c1', 'c2')),
    );
    expect(err).toBeInstanceOf(SluiceError);
    expect(err).toMatchObject({
      kind: 'conflict',
      message: `not creating the children of ${P}: its lease is no longer this reader's (leased)`,
    });
    expect(isFatal((err as SluiceError).kind)).toBe(false);
    expect(await w.ids()).toEqual([P]);
    expect(w.queue.pending).toEqual([]);
    expect(await w.read(P)).toEqual(taken);
  });

  it('its own lease expired (at the expiry instant): a conflict, no child created', async () => {
    const { w, held } = await rootLeased();
    const err = await rejection(endPartition(w.args('r1', held.lease!.expiresAt), held, split('p', 'c1')));
    expect(err).toBeInstanceOf(SluiceError);
    expect(err).toMatchObject({
      kind: 'conflict',
      message: `not creating the children of ${P}: its lease is no longer this reader's (leased)`,
    });
    expect(await w.ids()).toEqual([P]);
    expect(w.queue.pending).toEqual([]);
    expect(await w.read(P)).toEqual(held);
    // One millisecond earlier the same call ends the partition.
    const v = world();
    await v.roots('p');
    const again = await v.lease('p', 'r1');
    expect(
      await endPartition(v.args('r1', addMillis(again.lease!.expiresAt, -1)), again, split('p', 'c1')),
    ).toEqual([C1]);
  });

  it('a parent given back meanwhile (ready): the conflict names its state', async () => {
    const { w, held } = await rootLeased();
    await w.ledger.updatePartition(EPOCH, P, (e, writer) => releaseLease(e, { holder: 'r1', writer }));
    const err = await rejection(endPartition(w.args('r1', addMillis(T, 1_000)), held, split('p', 'c1')));
    expect(err).toBeInstanceOf(SluiceError);
    expect(err).toMatchObject({
      kind: 'conflict',
      message: `not creating the children of ${P}: its lease is no longer this reader's (ready)`,
    });
    expect(await w.ids()).toEqual([P]);
    expect(w.queue.pending).toEqual([]);
  });

  it('an entry already gone (the lineage finished and removed): a conflict, no child created', async () => {
    const { w, held } = await rootLeased();
    await w.remove(P);
    const err = await rejection(
      endPartition(w.args('r1', addMillis(T, 1_000)), held, split('p', 'c1', 'c2')),
    );
    expect(err).toBeInstanceOf(SluiceError);
    expect(err).toMatchObject({
      kind: 'conflict',
      message: `not creating the children of ${P}: its entry is gone (the lineage was finished by another reader)`,
    });
    expect(await w.ids()).toEqual([]);
    expect(w.queue.pending).toEqual([]);
  });

  it('a parent already finished by another reader: no ids, no write, nothing enqueued', async () => {
    const w = world();
    await w.roots('p');
    const stale = await w.lease('p', 'r1');
    const later = addMillis(T, LEASE_MS + 1_000);
    const taken = await w.lease('p', 'r2', later);
    expect(await endPartition(w.args('r2', later), taken, split('p', 'c1', 'c2'))).toEqual([C1, C2]);
    w.queue.drain();
    // A child has moved on since: a reader holds it.
    await w.lease('c1', 'r3', later);
    const before = await Promise.all([P, C1, C2].map((id) => w.store.inner.read(w.name(id))));
    const writes = w.store.writes.length;
    expect(await endPartition(w.args('r1', later), stale, split('p', 'c1', 'c2'))).toEqual([]);
    expect(w.store.writes.length).toBe(writes);
    expect(await Promise.all([P, C1, C2].map((id) => w.store.inner.read(w.name(id))))).toEqual(before);
    expect(w.queue.pending).toEqual([]);
  });
});

describe('endPartition: a refused finish', () => {
  it('the finishing write loses to another reader that took the lease: "could not finish", a conflict', async () => {
    const { w, held } = await rootLeased();
    // Between the re-read and the finishing write the lease runs out and r2 takes the partition: r1's
    // conditional write finds another generation, and on re-reading the finish is refused.
    w.store.before(w.name(P), async () => {
      await w.lease('p', 'r2', addMillis(T, LEASE_MS + 1_000));
    });
    const err = await rejection(
      endPartition(w.args('r1', addMillis(T, 1_000)), held, split('p', 'c1', 'c2')),
    );
    expect(err).toBeInstanceOf(SluiceError);
    expect(err).toMatchObject({
      kind: 'conflict',
      message: `could not finish ${P}: partition ${P} is not leased by r1`,
    });
    expect(isFatal((err as SluiceError).kind)).toBe(false);
    const parent = (await w.read(P))!;
    expect(parent).toMatchObject({ state: 'leased', lease: { holder: 'r2' }, end: null });
    // The children were created before the finish (create-only; the next finisher writes the same), and
    // stay waiting: nothing was enqueued.
    expect(await w.ids()).toEqual([P, C1, C2].sort());
    expect((await w.read(C1))!.state).toBe('waiting');
    expect((await w.read(C2))!.state).toBe('waiting');
    expect(w.queue.pending).toEqual([]);
  });

  it('the parent removed before its finishing write: "could not finish <id>: missing"', async () => {
    const { w, held } = await rootLeased();
    w.store.before(w.name(P), async () => w.remove(P));
    const err = await rejection(endPartition(w.args('r1', addMillis(T, 1_000)), held, split('p', 'c1')));
    expect(err).toBeInstanceOf(SluiceError);
    expect(err).toMatchObject({ kind: 'conflict', message: `could not finish ${P}: missing` });
    expect(w.queue.pending).toEqual([]);
  });
});
