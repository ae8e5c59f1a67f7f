/** The task-queue contract, run against every implementation (in-memory and Cloud Tasks on the emulator). */
import type { TaskQueue } from '../../shared/ports/task-queue';
import { freshEachTest } from './support/fresh-each-test';

/** Registers the contract tests; `make` builds a fresh queue, `delivered` lists ids that reached the target. */
export function taskQueueContract(label: string, make: () => Promise<TaskQueue>): void {
  describe(`TaskQueue contract: ${label}`, () => {
    const queue = freshEachTest(make);

    it('collapses a duplicate enqueue of the same id', async () => {
      const task = {
        queue: 'reader' as const,
        id: 'p-abc-1',
        url: 'http://127.0.0.1:1/read',
        body: { p: 'abc' },
      };
      expect(await queue().enqueue(task)).toBe('created');
      expect(await queue().enqueue(task)).toBe('exists');
    });

    it('keeps ids of different queues apart', async () => {
      const base = { id: 'same-id', url: 'http://127.0.0.1:1/x', body: {} };
      expect(await queue().enqueue({ ...base, queue: 'reader' })).toBe('created');
      expect(await queue().enqueue({ ...base, queue: 'backfill' })).toBe('created');
    });

    it('refuses an invalid id, naming it', async () => {
      await expect(
        queue().enqueue({ queue: 'reader', id: 'bad/id', url: 'http://127.0.0.1:1/x', body: {} }),
      ).rejects.toThrow('bad/id');
    });
  });
}
