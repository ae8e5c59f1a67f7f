/**
 * `npm run audit`: the dependency audit of the production packages, as far as the network allows.
 *
 * 1. the lockfile: every production package pinned to an npm registry tarball with a sha512 integrity
 *    (offline, always runs; see audit-lockfile.ts);
 * 2. advisories: `npm audit --omit=dev` (needs the registry's bulk advisory endpoint);
 * 3. signatures: `npm audit signatures` (needs the registry's keys and Sigstore's TUF repository).
 *
 * A check that could not run is reported as NOT CHECKED with npm's reason, never as passed. Exit code: 1 when
 * a check found a problem, 2 when none did but one could not run (an incomplete audit), 0 when all three ran
 * clean. `--allow-incomplete` turns 2 into 0 for machines that only reach the registry's metadata.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { checkLockfile } from './audit-lockfile';

type Verdict = { status: 'passed' | 'failed' | 'not-checked'; detail: string };

function npm(args: string[]): { code: number; stdout: string; stderr: string } {
  const run = spawnSync('npm', args, { encoding: 'utf8', timeout: 300_000 });
  return { code: run.status ?? 1, stdout: run.stdout ?? '', stderr: run.stderr ?? '' };
}

/** npm's own first error line (`npm error …`), for a NOT CHECKED reason. */
function npmReason(stderr: string, fallback: string): string {
  const lines = stderr.split('\n').filter((l) => /^npm (error|warn)/.test(l));
  // npm's line naming the request that failed says more than its code and syscall lines.
  const request = lines.find((l) => /request to|\b[45]\d\d\b/.test(l));
  return request ?? (lines.slice(0, 2).join(' / ') || fallback);
}

function parsed(text: string): Record<string, unknown> | undefined {
  try {
    return JSON.parse(text) as Record<string, unknown>;
  } catch {
    return undefined;
  }
}

function lockfile(root: string): Verdict {
  const report = checkLockfile(JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8')));
  if (report.problems.length === 0)
    return { status: 'passed', detail: `${report.checked} production packages pinned with sha512 integrity` };
  const lines = report.problems.map((p) => `    ${p.path}: ${p.problem}`);
  return { status: 'failed', detail: `${report.problems.length} not pinned:\n${lines.join('\n')}` };
}

function advisories(): Verdict {
  const run = npm(['audit', '--omit=dev', '--json']);
  const body = parsed(run.stdout);
  const counts = (body?.metadata as { vulnerabilities?: Record<string, number> } | undefined)
    ?.vulnerabilities;
  if (!counts) {
    const reason =
      typeof body?.message === 'string' ? body.message : npmReason(run.stderr, `exit ${run.code}`);
    return { status: 'not-checked', detail: `the audit endpoint did not answer: ${reason}` };
  }
  const found = Object.entries(counts).filter(([level, n]) => level !== 'total' && n > 0);
  if (found.length === 0) return { status: 'passed', detail: 'no known vulnerability' };
  const listed = found.map(([level, n]) => `${n} ${level}`).join(', ');
  return { status: 'failed', detail: `${listed} (run npm audit --omit=dev for the advisories)` };
}

function signatures(): Verdict {
  const run = npm(['audit', 'signatures', '--json']);
  const body = parsed(run.stdout) as { invalid?: unknown[]; missing?: unknown[] } | undefined;
  if (!body || !Array.isArray(body.invalid) || !Array.isArray(body.missing))
    return { status: 'not-checked', detail: npmReason(run.stderr, `exit ${run.code}`) };
  if (body.invalid.length + body.missing.length === 0)
    return { status: 'passed', detail: 'every registry signature verified' };
  return {
    status: 'failed',
    detail: `${body.invalid.length} invalid, ${body.missing.length} missing (run npm audit signatures)`,
  };
}

function main(): number {
  const root = join(__dirname, '..');
  const checks: Array<[string, () => Verdict]> = [
    ['lockfile', () => lockfile(root)],
    ['advisories', advisories],
    ['signatures', signatures],
  ];
  const verdicts = checks.map(([name, check]) => {
    const v = check();
    console.log(`${name}: ${v.status === 'not-checked' ? 'NOT CHECKED' : v.status} — ${v.detail}`);
    return v;
  });
  if (verdicts.some((v) => v.status === 'failed')) return 1;
  if (verdicts.some((v) => v.status === 'not-checked')) {
    console.log(
      'audit incomplete: run it where the registry audit endpoints are reachable (docs/security.md)',
    );
    return process.argv.includes('--allow-incomplete') ? 0 : 2;
  }
  return 0;
}

process.exitCode = main();
