import fc from 'fast-check';
import { partitionId, watermark } from '../../../shared/domain/ledger';
import { type Churn, StreamModel } from './ledger-model';
import { Simulation } from './ledger-sim';

type Op =
  | { t: 'tick' }
  | { t: 'deliver'; i: number; dup: boolean; budget: number }
  | { t: 'step'; i: number }
  | { t: 'crash'; i: number }
  | { t: 'clock'; ms: number }
  | { t: 'lose' };

const churn: fc.Arbitrary<Churn> = fc.record({
  kind: fc.constantFrom('split', 'move', 'merge'),
  pick: fc.nat(20),
  gap: fc.integer({ min: 1, max: 25 }),
});

const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 2, arbitrary: fc.constant({ t: 'tick' as const }) },
  {
    weight: 4,
    arbitrary: fc.record({
      t: fc.constant('deliver' as const),
      i: fc.nat(50),
      dup: fc.boolean(),
      budget: fc.integer({ min: 1, max: 8 }),
    }),
  },
  { weight: 6, arbitrary: fc.record({ t: fc.constant('step' as const), i: fc.nat(50) }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('crash' as const), i: fc.nat(50) }) },
  {
    weight: 2,
    arbitrary: fc.record({ t: fc.constant('clock' as const), ms: fc.integer({ min: 1, max: 60 }) }),
  },
  { weight: 1, arbitrary: fc.constant({ t: 'lose' as const }) },
);

function runToEnd(g: Generator<void, void>): void {
  for (let i = 0; i < 1000 && !g.next().done; i++);
}

/** Interleaves readers and schedulers as the ops say, then drains without faults until everything is read. */
function simulate(model: StreamModel, ops: Op[]): Simulation {
  const sim = new Simulation(model);
  const actors: Generator<void, void>[] = [];
  const step = (i: number) => {
    const g = actors[i % actors.length];
    if (g?.next().done) actors.splice(actors.indexOf(g), 1);
  };
  for (const o of ops) {
    if (o.t === 'tick') {
      actors.push(sim.tick());
      step(actors.length - 1);
    } else if (o.t === 'deliver' && sim.queue.length > 0) {
      const at = o.i % sim.queue.length;
      const id = sim.queue[at]!;
      if (!o.dup) sim.queue.splice(at, 1); // dup: the task stays queued and is delivered again later
      actors.push(sim.reader(id, o.budget));
      step(actors.length - 1);
    } else if (o.t === 'step' && actors.length > 0) step(o.i);
    else if (o.t === 'crash' && actors.length > 0) actors.splice(o.i % actors.length, 1);
    else if (o.t === 'clock') sim.advance(o.ms);
    else if (o.t === 'lose') sim.store.loseNextResponse = true;
  }
  for (const g of actors) runToEnd(g);
  sim.store.loseNextResponse = false;
  for (let round = 0; round < 300 && !isDrained(sim); round++) {
    sim.advance(60);
    runToEnd(sim.tick());
    for (let n = 0; n < 1000 && sim.queue.length > 0; n++) runToEnd(sim.reader(sim.queue.shift()!, 1000));
  }
  return sim;
}

/** Every ended partition finished (or removed), every active one read up to the end of the model's time. */
function isDrained(sim: Simulation): boolean {
  for (const p of sim.model.partitions.values()) {
    const got = sim.read(partitionIdOf(sim, p.token));
    if (p.end !== null) {
      if (!(got?.entry.state === 'finished' || sim.removed.has(partitionIdOf(sim, p.token)))) return false;
    } else if (!got || got.entry.position < sim.model.horizon) return false;
  }
  return true;
}

function partitionIdOf(_sim: Simulation, token: string): string {
  return partitionId(token);
}

describe('ledger protocol over random split/merge DAGs', () => {
  it('keeps every DESIGN §4 invariant under interleaved readers, schedulers, duplicates and crashes', () => {
    const totals = {
      repeatedCreates: 0,
      mergeRaces: 0,
      lostResponses: 0,
      takeovers: 0,
      duplicatesRefused: 0,
    };
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 3 }),
        fc.array(churn, { maxLength: 8 }),
        fc.integer(),
        fc.array(op, { maxLength: 120 }),
        (roots, events, seed, ops) => {
          const model = new StreamModel(roots, events, seed);
          const sim = simulate(model, ops);
          expect(isDrained(sim)).toBe(true);
          // Nothing lost: every record of the stream up to the end of its time is in the sink.
          const missing = model.keysThrough(model.horizon).filter((k) => !sim.sink.has(k));
          expect(missing).toEqual([]);
          sim.checkWatermark(watermark([...sim.store.objects.keys()].map((id) => sim.read(id)!.entry)));
          for (const [k, v] of Object.entries(sim.stats)) totals[k as keyof typeof totals] += v;
        },
      ),
      { numRuns: 150, seed: 20240131 },
    );
    // The runs exercised the racy paths the invariants are about.
    expect(totals.repeatedCreates).toBeGreaterThan(0);
    expect(totals.mergeRaces).toBeGreaterThan(0);
    expect(totals.lostResponses).toBeGreaterThan(0);
    expect(totals.takeovers).toBeGreaterThan(0);
    expect(totals.duplicatesRefused).toBeGreaterThan(0);
  });
});
