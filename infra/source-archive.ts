/**
 * The function source archive, defined once: the program uploads it and the artifact test unpacks the
 * same entries and runs them. It holds the compiled `dist/shared` and `dist/functions`, `package.json`
 * (with `gcp-build` neutralised, so the platform's build installs production dependencies and compiles
 * nothing) and `package-lock.json` (so that install is reproducible). No `node_modules`: the platform
 * installs them from the lockfile.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, posix, relative, sep } from 'node:path';

/** One file of the archive: its path inside the archive (POSIX separators) and its bytes. */
export interface ArchiveEntry {
  path: string;
  content: Buffer;
}

/** Compiled folders the functions need at run time (tests and infra are not shipped). */
const SHIPPED_DIRS = ['dist/shared', 'dist/functions'];
/** Only runtime files: compiled JavaScript and JSON data. */
const SHIPPED_FILE = /\.(js|json)$/;
const TEST_FILE = /\.test\.js$/;

/** The archive entries for the repository at `root`, sorted by path. Throws when the build is missing. */
export function sourceArchiveEntries(root: string): ArchiveEntry[] {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as Record<string, unknown>;
  const main = typeof pkg.main === 'string' ? pkg.main : 'index.js';
  if (!exists(join(root, main))) {
    throw new Error(`the function source is not built: ${main} is missing; run \`npm run build\` first`);
  }
  refuseStaleBuild(root);
  const entries: ArchiveEntry[] = [
    { path: 'package.json', content: Buffer.from(neutralisedPackageJson(pkg)) },
    { path: 'package-lock.json', content: readFileSync(join(root, 'package-lock.json')) },
  ];
  for (const dir of SHIPPED_DIRS) {
    for (const file of walk(join(root, dir))) {
      const path = relative(root, file).split(sep).join(posix.sep);
      if (SHIPPED_FILE.test(path) && !TEST_FILE.test(path))
        entries.push({ path, content: readFileSync(file) });
    }
  }
  return entries.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/**
 * The source files under `shared/` and `functions/` whose compiled file in `dist/` is missing or older than
 * them: a change made without `npm run build` would otherwise deploy the old code, silently.
 */
export function staleBuildFiles(root: string): string[] {
  const stale: string[] = [];
  for (const dir of SHIPPED_DIRS) {
    const sourceDir = dir.slice('dist/'.length);
    for (const file of walk(join(root, sourceDir))) {
      if (!file.endsWith('.ts') || file.endsWith('.test.ts') || file.endsWith('.d.ts')) continue;
      const source = relative(root, file).split(sep).join(posix.sep);
      const built = join(root, 'dist', `${source.slice(0, -'.ts'.length)}.js`);
      if (!exists(built) || statSync(built).mtimeMs < statSync(file).mtimeMs) stale.push(source);
    }
  }
  return stale.sort();
}

function refuseStaleBuild(root: string): void {
  const stale = staleBuildFiles(root);
  if (stale.length === 0) return;
  const shown = stale.slice(0, 10).join(', ') + (stale.length > 10 ? ` and ${stale.length - 10} more` : '');
  throw new Error(
    `the function build in dist/ is older than its sources (${shown}): run \`npm run build\` first, or the old code would be deployed`,
  );
}

/**
 * `package.json` as shipped: `gcp-build` set to the empty string, because the platform's Node.js buildpack
 * would otherwise run `npm run build` (tsc, a dev dependency that is not installed there).
 */
export function neutralisedPackageJson(pkg: Record<string, unknown>): string {
  const scripts = typeof pkg.scripts === 'object' && pkg.scripts !== null ? pkg.scripts : {};
  return `${JSON.stringify({ ...pkg, scripts: { ...scripts, 'gcp-build': '' } }, null, 2)}\n`;
}

/** Content hash of the archive: part of the uploaded object's name, so any code change redeploys. */
export function archiveHash(entries: readonly ArchiveEntry[]): string {
  const h = createHash('sha256');
  for (const e of entries) {
    h.update(e.path).update('\0').update(e.content).update('\0');
  }
  return h.digest('hex').slice(0, 16);
}

/** Writes the entries under `dir`, as the platform sees them after unpacking the upload. */
export function writeEntries(entries: readonly ArchiveEntry[], dir: string): void {
  for (const e of entries) {
    const target = join(dir, ...e.path.split('/'));
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, e.content);
  }
}

function exists(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

function walk(dir: string): string[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  return names.flatMap((name) => {
    const full = join(dir, name);
    return statSync(full).isDirectory() ? walk(full) : [full];
  });
}
