/**
 * The object-store contract: one suite, run against every implementation (in-memory and Cloud Storage on
 * the emulator), so the ledger can rely on the same behaviour everywhere.
 */
import { listAll, type ObjectStore } from '../../shared/ports/object-store';
import { freshEachTest } from './support/fresh-each-test';

/** Registers the contract tests for a store made fresh by `make` for each test. */
export function objectStoreContract(label: string, make: () => Promise<ObjectStore>): void {
  describe(`ObjectStore contract: ${label}`, () => {
    const store = freshEachTest(make);

    it('creates only when absent and reads back content and metadata', async () => {
      const created = await store().write('p/a', Buffer.from('{"v":1}'), {
        ifGeneration: 0,
        metadata: { state: 'ready' },
      });
      expect(created.ok).toBe(true);
      const again = await store().write('p/a', Buffer.from('{"v":2}'), { ifGeneration: 0 });
      expect(again).toEqual({ ok: false, reason: 'conflict' });
      const read = await store().read('p/a');
      expect(read?.data.toString()).toBe('{"v":1}');
      expect(read?.metadata).toEqual({ state: 'ready' });
      expect(created.ok && read?.generation).toBe(created.ok && created.generation);
    });

    it('writes if unchanged and refuses a stale generation', async () => {
      const first = await store().write('p/b', Buffer.from('1'), { ifGeneration: 0 });
      if (!first.ok) throw new Error('create failed');
      const second = await store().write('p/b', Buffer.from('2'), { ifGeneration: first.generation });
      expect(second.ok).toBe(true);
      const stale = await store().write('p/b', Buffer.from('3'), { ifGeneration: first.generation });
      expect(stale).toEqual({ ok: false, reason: 'conflict' });
      expect((await store().read('p/b'))?.data.toString()).toBe('2');
      expect(second.ok && second.generation).not.toBe(first.generation);
    });

    it('answers undefined for a missing object and conflict for a missing update', async () => {
      expect(await store().read('p/none')).toBeUndefined();
      expect(await store().write('p/none', Buffer.from('x'), { ifGeneration: '123' })).toEqual({
        ok: false,
        reason: 'conflict',
      });
    });

    it('keeps a custom time and lists it', async () => {
      const customTime = '2026-01-02T03:04:05.000Z';
      await store().write('t/done', Buffer.from('{}'), { ifGeneration: 0, customTime });
      expect(Date.parse((await store().read('t/done'))?.customTime ?? '')).toBe(Date.parse(customTime));
      const [listed] = (await store().list('t/')).items;
      expect(Date.parse(listed?.customTime ?? '')).toBe(Date.parse(customTime));
    });

    it('deletes only at the expected generation', async () => {
      const w = await store().write('p/c', Buffer.from('x'), { ifGeneration: 0 });
      if (!w.ok) throw new Error('create failed');
      expect((await store().delete('p/c', '1')).ok).toBe(false);
      expect((await store().delete('p/c', w.generation)).ok).toBe(true);
      expect(await store().read('p/c')).toBeUndefined();
    });

    it('lists by prefix in name order with metadata, across pages', async () => {
      for (let i = 0; i < 7; i++) {
        await store().write(`q/part-${i}`, Buffer.from('x'), { ifGeneration: 0, metadata: { i: String(i) } });
      }
      await store().write('other/x', Buffer.from('x'), { ifGeneration: 0 });
      const page = await store().list('q/', { maxResults: 3 });
      expect(page.items.map((o) => o.name)).toEqual(['q/part-0', 'q/part-1', 'q/part-2']);
      expect(page.nextPageToken).toBeDefined();
      const all = await listAll(store(), 'q/');
      expect(all.items.map((o) => o.metadata.i)).toEqual(['0', '1', '2', '3', '4', '5', '6']);
    });
  });
}
