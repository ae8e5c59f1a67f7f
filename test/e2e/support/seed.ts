/**
 * Seeds of the fault runs. Every run is driven by one seed (the workload, where and which faults strike);
 * `SLUICE_E2E_SEED` replays a run, otherwise each run draws a fresh one. A failing run prints its seed and
 * the command that replays it.
 */
import { freshSeed } from '../../../local/random';

/** The seed of a run: `SLUICE_E2E_SEED` when set (a non-negative integer), a fresh one otherwise. */
export function runSeed(env: NodeJS.ProcessEnv = process.env): number {
  const fixed = env.SLUICE_E2E_SEED;
  if (fixed === undefined || fixed === '') return freshSeed();
  if (!/^\d+$/.test(fixed)) throw new Error(`SLUICE_E2E_SEED must be a non-negative integer, got "${fixed}"`);
  return Number(fixed) >>> 0;
}

/** The line printed when a run fails: its seed and how to replay exactly that run. */
export function replayLine(name: string, seed: number, file: string): string {
  return `[e2e] "${name}" failed with seed ${seed}; replay: SLUICE_E2E_SEED=${seed} NODE_OPTIONS=--experimental-vm-modules npx jest ${file} -t "${name}"`;
}
