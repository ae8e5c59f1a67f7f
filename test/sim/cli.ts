/**
 * `npm run simulate -- --seeds N [--seed S] [--scenario NAME] [--replay SCHEDULE] [--no-shrink]`: runs seeds
 * S..S+N-1 of a scenario, prints each failure with its invariant, the command that replays it and a shrunk
 * schedule, then the figures (steps per second, seeds per minute). Exits 1 when any seed failed.
 */
import { formatSchedule, parseSchedule, shrink } from './decisions';
import { type RunResult, runSeed, SCENARIOS } from './run';

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

async function report(result: RunResult, scenario: string, noShrink: boolean): Promise<void> {
  console.log(`FAIL seed ${result.seed} [${result.invariant}] ${result.message}`);
  console.log(`  replay: npm run simulate -- --seed ${result.seed} --seeds 1 --scenario ${scenario}`);
  if (noShrink) return;
  const fails = async (schedule: number[]) => {
    const again = await runSeed(result.seed, SCENARIOS[scenario]!, schedule);
    return !again.ok && again.invariant === result.invariant;
  };
  const shrunk = await shrink(result.log, fails);
  const text = formatSchedule(shrunk);
  const kept = shrunk.filter((v) => v !== 0).length;
  console.log(`  shrunk to ${kept} of ${result.log.filter((v) => v !== 0).length} non-plain draws:`);
  console.log(`  npm run simulate -- --seed ${result.seed} --scenario ${scenario} --replay '${text}'`);
}

async function main(): Promise<void> {
  const scenario = arg('scenario') ?? 'default';
  if (!SCENARIOS[scenario])
    throw new Error(`unknown scenario ${scenario}: ${Object.keys(SCENARIOS).join(', ')}`);
  const first = Number(arg('seed') ?? 1);
  const seeds = Number(arg('seeds') ?? 1);
  const replay = arg('replay');
  const noShrink = process.argv.includes('--no-shrink');
  const started = Date.now();
  let steps = 0;
  let failed = 0;
  const fired: Record<string, number> = {};
  for (let seed = first; seed < first + seeds; seed++) {
    const result = await runSeed(seed, SCENARIOS[scenario]!, replay ? parseSchedule(replay) : null);
    steps += result.steps;
    for (const [name, n] of Object.entries(result.fired)) fired[name] = (fired[name] ?? 0) + n;
    if (result.ok) continue;
    failed++;
    await report(result, scenario, noShrink || replay !== undefined);
  }
  const secs = (Date.now() - started) / 1000;
  console.log(
    `${seeds} seeds of ${scenario}, ${failed} failed, ${steps} steps in ${secs.toFixed(1)} s: ` +
      `${Math.round(steps / secs)} steps/s, ${Math.round((seeds / secs) * 60)} seeds/min`,
  );
  for (const [name, n] of Object.entries(fired).sort()) console.log(`  ${name}: fired ${n} times`);
  process.exitCode = failed > 0 ? 1 : 0;
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 2;
});
