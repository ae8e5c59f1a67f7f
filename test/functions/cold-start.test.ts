/**
 * What a function loads on a cold start: loading a Google client library is most of an instance's start
 * (the writer took about 1.0 CPU-second to listen while it loaded the BigQuery and Cloud Tasks clients it
 * never uses, about 0.75 without them). The writer talks to Spanner and Cloud Storage only; this loads its
 * module in a fresh process, as the platform does, and lists the client packages that came with it.
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

const root = join(__dirname, '..', '..');

/** The `@google-cloud/*` and `@grpc/*` packages in the module cache after requiring `module`. */
function packagesLoadedBy(module: string): string[] {
  const script = `require(${JSON.stringify(module)});
const names = Object.keys(require.cache)
  .map((p) => /node_modules\\/(@(?:google-cloud|grpc)\\/[^/]+)\\//.exec(p)?.[1])
  .filter(Boolean);
process.stdout.write('\\nloaded ' + JSON.stringify([...new Set(names)].sort()));`;
  const out = execFileSync(process.execPath, ['--require', 'tsx/cjs', '-e', script], {
    cwd: root,
    env: { PATH: process.env.PATH ?? '', METADATA_SERVER_DETECTION: 'none' },
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  // The function logs its configuration problems (none set here) on stdout first.
  const line = out.split('\n').find((l) => l.startsWith('loaded '));
  if (!line) throw new Error(`no list of loaded packages in: ${out}`);
  return JSON.parse(line.slice('loaded '.length)) as string[];
}

describe('what a function loads on a cold start', () => {
  it('the writer loads the Spanner and Cloud Storage clients and neither BigQuery nor Cloud Tasks', () => {
    const loaded = packagesLoadedBy('./functions/writer');
    expect(loaded).toEqual(expect.arrayContaining(['@google-cloud/spanner', '@google-cloud/storage']));
    expect(loaded.filter((p) => /bigquery|tasks/.test(p))).toEqual([]);
  }, 30_000);

  it('the reader loads the BigQuery clients (the check sees a package when it is loaded)', () => {
    const loaded = packagesLoadedBy('./functions/reader');
    expect(loaded).toEqual(
      expect.arrayContaining(['@google-cloud/bigquery', '@google-cloud/bigquery-storage']),
    );
  }, 30_000);
});
