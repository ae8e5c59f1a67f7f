/** `sluice …` as a child process, as an operator runs it from the repository's root. */
import { execFile } from 'node:child_process';
import { join } from 'node:path';

/** The repository's root. */
export const ROOT = join(__dirname, '..', '..', '..');

/** Runs `sluice <argv> --url <url>` through `bin/sluice.js`; its exit code and stdout. */
export function runSluice(url: string, argv: string[]): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [join(ROOT, 'bin', 'sluice.js'), ...argv, '--url', url],
      { cwd: ROOT, env: { ...process.env, NODE_OPTIONS: '' }, timeout: 60_000 },
      (err, stdout) => resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, out: stdout }),
    );
  });
}
