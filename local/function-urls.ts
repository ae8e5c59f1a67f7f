/**
 * Function URLs across runs on one `--data-dir`. The Tasks emulator keeps its queued tasks there, each
 * addressed to the function URL of the run that enqueued it; the next run's functions listen on new ports,
 * so those tasks would be dispatched to nothing, retried for ever and the partitions they carry never read.
 * Each run records its function URLs in the directory, and a restarted stack points the restored tasks at
 * the new URLs before the pipeline runs.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TasksAdmin } from './emulators/tasks/emulator';

/** The functions' base URLs of one run (null: not started). */
export type FunctionUrls = Record<string, string | null>;

const FILE = 'function-urls.json';

function previous(dataDir: string): FunctionUrls {
  const path = join(dataDir, FILE);
  if (!existsSync(path)) return {};
  const parsed: unknown = JSON.parse(readFileSync(path, 'utf8'));
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed))
    throw new Error(`${path}: expected an object of function name to URL`);
  return parsed as FunctionUrls;
}

/**
 * Points the tasks restored from `dataDir` at this run's function URLs, then records them for the next run.
 * Returns how many tasks were moved.
 */
export function retargetRestoredTasks(dataDir: string, tasks: TasksAdmin, urls: FunctionUrls): number {
  const before = previous(dataDir);
  const moves: Array<[string, string]> = [];
  for (const [name, url] of Object.entries(urls)) {
    const old = before[name];
    if (url && old && old !== url) moves.push([old, url]);
  }
  // One pass over all moves: an old URL may be another function's new one.
  const moved = moves.length ? tasks.retarget(moves) : 0;
  writeFileSync(join(dataDir, FILE), `${JSON.stringify(urls)}\n`);
  return moved;
}
