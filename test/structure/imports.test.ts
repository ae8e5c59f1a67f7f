/** The structure checks of `npm test`: no import cycle in product code, every use-case folder entered by its door. */
import { join } from 'node:path';
import { cycles, doorFolders, doorViolations, forbiddenCycles, importGraph } from './import-graph';

const root = join(__dirname, '..', '..');
const graph = importGraph(root);

describe('the import graph of product code', () => {
  it('is read from the sources (a known arrow is found)', () => {
    const reader = graph.get('functions/reader/index.ts');
    expect(reader).toBeDefined();
    expect([...(reader ?? [])]).toContain('shared/app/replication/common/index.ts');
  });

  it('has no import cycle outside a grammar folder', () => {
    expect(forbiddenCycles(graph)).toEqual([]);
  });

  it('finds a cycle when there is one', () => {
    const g = new Map([
      ['a.ts', new Set(['b.ts'])],
      ['b.ts', new Set(['c.ts'])],
      ['c.ts', new Set(['a.ts'])],
      ['d.ts', new Set(['a.ts'])],
    ]);
    expect(cycles(g)).toEqual([['a.ts', 'b.ts', 'c.ts']]);
  });

  it('enters every use-case folder of shared/app through its index.ts', () => {
    expect(doorFolders(root)).toEqual(
      expect.arrayContaining([
        'shared/app/replication/reader',
        'shared/app/replication/scheduler',
        'shared/app/sinks',
        'local/emulators/spanner/sql',
      ]),
    );
    expect(doorViolations(root, graph)).toEqual([]);
  });
});
