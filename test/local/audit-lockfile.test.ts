import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { checkLockfile } from '../../local/audit-lockfile';

const SHA512 = `sha512-${'A'.repeat(86)}==`;

describe('the lockfile check of npm run audit', () => {
  it('passes the repository lockfile: every production package pinned with sha512', () => {
    const lock = JSON.parse(readFileSync(join(__dirname, '../../package-lock.json'), 'utf8'));
    const report = checkLockfile(lock);
    expect(report.problems).toEqual([]);
    expect(report.checked).toBeGreaterThan(100);
  });

  it('names each production package without integrity, from elsewhere, or with sha1; skips dev and links', () => {
    const report = checkLockfile({
      packages: {
        '': { version: '1.0.0' },
        'node_modules/ok': { version: '1.0.0', integrity: SHA512 },
        'node_modules/ok-resolved': {
          resolved: 'https://registry.npmjs.org/ok-resolved/-/ok-resolved-1.0.0.tgz',
          integrity: SHA512,
        },
        'node_modules/none': { version: '1.0.0' },
        'node_modules/git': { resolved: 'git+ssh://git@github.com/x/git.git#abc', integrity: SHA512 },
        'node_modules/old': { version: '1.0.0', integrity: 'sha1-abc=' },
        'node_modules/dev-only': { version: '1.0.0', dev: true },
        'node_modules/local': { resolved: 'packages/local', link: true },
      },
    });
    expect(report.checked).toBe(5);
    expect(report.problems).toEqual([
      { path: 'node_modules/none', problem: 'has no integrity hash' },
      {
        path: 'node_modules/git',
        problem: 'resolves outside https://registry.npmjs.org/: git+ssh://git@github.com/x/git.git#abc',
      },
      { path: 'node_modules/old', problem: 'integrity is not sha512: sha1-abc=' },
    ]);
  });

  it('refuses a lockfile without a packages map rather than passing it', () => {
    expect(() => checkLockfile({ lockfileVersion: 1, dependencies: {} })).toThrow(/no "packages" map/);
  });
});
