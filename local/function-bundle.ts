/**
 * The function host and the four functions as one JavaScript file, so a function process starts on plain
 * `node` instead of compiling its TypeScript through `tsx` on the way in: a start took about 2.1 s of CPU
 * that way and takes about 1.1 s from the bundle (measured on the 2-core test machine), and the local stack
 * and the end-to-end tests start four of them for every stack and again after every kill.
 *
 * The bundle is built from the current sources each time a process asks for it first (esbuild, about
 * 150 ms), so an edited function is what runs. Packages stay outside the bundle (`require`d from
 * `node_modules` as on the platform), which is why it is written under `node_modules/.cache/`: that is
 * where those `require`s resolve. Its name is the hash of its content, written through a temporary file
 * and a rename, so processes building at once (jest workers) never see each other's half-written file.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

let built: Promise<string> | undefined;

/** Path of the bundled `local/function-host.ts` for the repository at `root`, built once per process. */
export function bundledFunctionHost(root: string): Promise<string> {
  built ??= build(root).catch((err: unknown) => {
    built = undefined;
    throw err;
  });
  return built;
}

async function build(root: string): Promise<string> {
  const esbuild = await import('esbuild');
  const dir = join(root, 'node_modules', '.cache', 'sluice-functions');
  const result = await esbuild.build({
    absWorkingDir: root,
    entryPoints: [join(root, 'local', 'function-host.ts')],
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    packages: 'external',
    sourcemap: 'inline',
    sourcesContent: false,
    write: false,
    // Where it will lie, so the source map's paths lead back to the sources.
    outfile: join(dir, 'function-host.js'),
    logLevel: 'silent',
  });
  const code = result.outputFiles[0]?.contents;
  if (!code) throw new Error('esbuild produced no function host bundle');
  const hash = createHash('sha256').update(code).digest('hex').slice(0, 16);
  const file = join(dir, `function-host-${hash}.js`);
  if (!existsSync(file)) {
    mkdirSync(dir, { recursive: true });
    const tmp = `${file}.${process.pid}.tmp`;
    writeFileSync(tmp, code);
    renameSync(tmp, file);
    removeStale(dir, file);
  }
  return file;
}

/** Bundles of earlier sources, a day old or more (one per edit otherwise piles up); a failure is harmless. */
function removeStale(dir: string, keep: string): void {
  const dayAgo = Date.now() - 86_400_000;
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    try {
      if (path !== keep && statSync(path).mtimeMs < dayAgo) rmSync(path, { force: true });
    } catch {
      // Another process removed it first.
    }
  }
}
