/** What goes into the uploaded source archive, and when its name changes. */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { archiveHash, sourceArchiveEntries } from '../../infra/source-archive';

let root = '';
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'sluice-src-'));
  const pkg = {
    name: 'x',
    main: 'dist/functions/index.js',
    scripts: { build: 'tsc', 'gcp-build': 'npm run build' },
  };
  writeFileSync(join(root, 'package.json'), JSON.stringify(pkg));
  writeFileSync(join(root, 'package-lock.json'), '{"lockfileVersion":3}');
  for (const d of ['dist/functions', 'dist/shared/domain', 'dist/test', 'dist/infra'])
    mkdirSync(join(root, d), { recursive: true });
  writeFileSync(join(root, 'dist/functions/index.js'), 'exports.a = 1;');
  writeFileSync(join(root, 'dist/functions/index.js.map'), '{}');
  writeFileSync(join(root, 'dist/shared/domain/x.js'), 'exports.x = 1;');
  writeFileSync(join(root, 'dist/shared/domain/x.test.js'), 'test');
  writeFileSync(join(root, 'dist/test/t.js'), 'test');
  writeFileSync(join(root, 'dist/infra/index.js'), 'infra');
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

test('ships the compiled functions and shared code, package.json with gcp-build neutralised, and the lockfile', () => {
  const entries = sourceArchiveEntries(root);
  expect(entries.map((e) => e.path)).toEqual([
    'dist/functions/index.js',
    'dist/shared/domain/x.js',
    'package-lock.json',
    'package.json',
  ]);
  const pkg = JSON.parse(String(entries.find((e) => e.path === 'package.json')?.content));
  expect(pkg.scripts).toEqual({ build: 'tsc', 'gcp-build': '' });
  expect(pkg.main).toBe('dist/functions/index.js');
});

test('any code change changes the archive name; an unchanged build keeps it', () => {
  const before = archiveHash(sourceArchiveEntries(root));
  expect(archiveHash(sourceArchiveEntries(root))).toBe(before);
  writeFileSync(join(root, 'dist/shared/domain/x.js'), 'exports.x = 2;');
  expect(archiveHash(sourceArchiveEntries(root))).not.toBe(before);
});

test('refuses to package a missing build, saying what to run', () => {
  rmSync(join(root, 'dist/functions/index.js'));
  expect(() => sourceArchiveEntries(root)).toThrow(/npm run build/);
});
