/**
 * `npm start` as a user runs it: a child process with `--duration`, which must print the ready line, run the
 * workload, catch up, find BigQuery equal to Spanner and exit 0. PostgreSQL here; the stack tests cover both.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';

const root = join(__dirname, '..', '..');

function runStart(args: string[], timeoutMs: number): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', join(root, 'local', 'start.ts'), ...args], {
      cwd: root,
      env: { ...process.env, NODE_OPTIONS: '', METADATA_SERVER_DETECTION: 'none' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      out += d.toString();
    });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`npm start did not finish within ${timeoutMs} ms:\n${out.slice(-3000)}`));
    }, timeoutMs);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, out });
    });
  });
}

it('runs the pipeline on the emulators and ends with BigQuery equal to Spanner', async () => {
  const { code, out } = await runStart(
    ['--dialect', 'postgresql', '--duration', '8', '--seed', '42'],
    100_000,
  );
  const ready = /^sluice local ready (\{.*\})$/m.exec(out);
  expect(ready).not.toBeNull();
  const info = JSON.parse(ready![1]!) as { spanner: { dialect: string }; tables: unknown[] };
  expect(info.spanner.dialect).toBe('POSTGRESQL');
  expect(info.tables.length).toBeGreaterThan(0);
  if (code !== 0) console.error(out.slice(-4000));
  expect(out).toContain('verdict: BigQuery equals Spanner');
  expect(code).toBe(0);
}, 110_000);
