/** `backfill show`'s per-table breakdown for jobs a running stack rarely shows: failed and running ones. */
import { formatJobTables } from '../../cli/format';

const job = (state: string) => ({
  id: 'j1',
  state,
  tables: [
    { name: 'Orders', partitions: 4, partitionsDone: 4, rowsWritten: 400 },
    { name: 'Items', partitions: 3, partitionsDone: 1, rowsWritten: 10 },
  ],
});

it('names the tables a failed job left, with their partitions not copied', () => {
  expect(formatJobTables(job('failed')).split('\n')).toEqual([
    'table   state   partitions  rows read  rows written  not copied',
    'Orders  done    4/4         400        400           0',
    'Items   failed  1/3         10         10            2',
  ]);
});

it('shows a running job per table, with nothing counted as not copied yet', () => {
  const lines = formatJobTables(job('running')).split('\n');
  expect(lines[1]).toMatch(/^Orders +done +4\/4 /);
  expect(lines[2]).toMatch(/^Items +running +1\/3 +10 +10 +-$/);
});
