/** Change reads that take time on the harness clock, or that the test watches record by record. */
import type { ChangeRecord } from '../../../shared/domain/change-record';
import type { ChangeQuery } from '../../../shared/ports/change-source';
import type { Harness } from './harness';

/** From now on `hook` sees each record the script yields, with the query it answers, before the reader. */
export function onEachRecord(h: Harness, hook: (record: ChangeRecord, query: ChangeQuery) => void): void {
  const read = h.script.read.bind(h.script);
  h.script.read = async function* (query: ChangeQuery) {
    for await (const r of read(query)) {
      hook(r, query);
      yield r;
    }
  };
}

/** From now on each data-change record the script yields takes `ms` of the harness clock to read. */
export function readDataChangesSlowly(h: Harness, ms: number): void {
  onEachRecord(h, (r) => {
    if (r.kind === 'data-change') h.advance(ms);
  });
}
