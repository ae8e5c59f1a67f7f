/**
 * A CPU profile of one phase of a benchmark, through the inspector of this process: `--profile <dir>`
 * writes `<phase>.cpuprofile` files (open them in Chrome's DevTools) covering only the measured work, not
 * the loading around it. The folder is created if it does not exist.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { join } from 'node:path';

/** Starts profiling; the returned function stops and writes `<dir>/<name>.cpuprofile`. */
export async function profilePhase(dir: string | undefined, name: string): Promise<() => Promise<void>> {
  if (!dir) return async () => undefined;
  const session = new Session();
  session.connect();
  const post = (method: string) =>
    new Promise<unknown>((resolve, reject) =>
      session.post(method, (err, result) => (err ? reject(err) : resolve(result))),
    );
  await post('Profiler.enable');
  await post('Profiler.start');
  return async () => {
    const { profile } = (await post('Profiler.stop')) as { profile: unknown };
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, `${name}.cpuprofile`), JSON.stringify(profile));
    session.disconnect();
  };
}
