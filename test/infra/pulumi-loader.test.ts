/**
 * `infra/index.ts` loaded exactly as `pulumi preview` / `pulumi up` load it: the Node.js language host's run
 * entry point and TypeScript loader (`@pulumi/pulumi/cmd/run`, its ts-node with the program folder's
 * tsconfig, type checking on) in a fresh Node process, the config passed as Pulumi passes it, the engine
 * replaced by Pulumi's mocks. Without `infra/tsconfig.json` this loader compiled the program with loose
 * defaults and failed (`TS2339 … 'issues' does not exist on type 'PipelineRead'`, `TS2554`).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, statSync, utimesSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { deployed, installMocks, settingsOf, stackConfig } from './harness';

const ROOT = resolve(__dirname, '../..');
const HOST = join(__dirname, 'support', 'pulumi-host.cjs');

interface HostResult {
  status: number | null;
  output: string;
  resources: Array<{ type: string; name: string; inputs: Record<string, unknown> }>;
  errors: string[];
}

/** Pulumi config as the CLI hands it to the language host: `namespace:key` → string (JSON for objects). */
function pulumiConfig(config: Record<string, unknown>): string {
  return JSON.stringify(
    Object.fromEntries(
      Object.entries(config).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)]),
    ),
  );
}

function runProgram(config: Record<string, unknown>): HostResult {
  const resultFile = join(mkdtempSync(join(tmpdir(), 'sluice-pulumi-')), 'result.json');
  const run = spawnSync(process.execPath, [HOST, join(ROOT, 'infra'), 'index.ts', resultFile], {
    cwd: join(ROOT, 'infra'),
    env: {
      PATH: process.env.PATH ?? '',
      // What the language host sets for a TypeScript program (`runtime.options.typescript`, default true).
      PULUMI_NODEJS_TYPESCRIPT: 'true',
      PULUMI_CONFIG: pulumiConfig(config),
    },
    encoding: 'utf8',
    timeout: 240_000,
  });
  const result = JSON.parse(readFileSync(resultFile, 'utf8')) as Omit<HostResult, 'status' | 'output'>;
  return { status: run.status, output: `${run.stdout}${run.stderr}`, ...result };
}

const base = stackConfig();
const config = {
  'gcp:project': base.project,
  'gcp:region': base.region,
  'sluice:pipeline': base.pipeline,
  'sluice:operators': ['group:data-eng@acme.example'],
};

beforeAll(() => {
  // The program packages the built functions (`npm run build`), as a user runs it before `pulumi up`.
  execFileSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', 'tsconfig.build.json'], {
    cwd: ROOT,
  });
}, 120_000);

test('the language host compiles and runs the program, creating the resources the tests review', async () => {
  const result = runProgram(config);
  if (result.status !== 0) console.error(result.output);
  expect(result.errors).toEqual([]);
  expect(result.status).toBe(0);
  const hosted = result.resources.filter((r) => r.type !== 'pulumi:pulumi:Stack');
  // The same graph the in-process harness builds from the same configuration.
  const recorded = installMocks();
  await deployed(settingsOf({ deployment: { operators: config['sluice:operators'] } }));
  const names = (rs: Array<{ type: string; name: string }>) => rs.map((r) => `${r.type}::${r.name}`).sort();
  expect(names(hosted)).toEqual(names(recorded));
  const grants = hosted.filter((r) => r.type === 'gcp:cloudrunv2/serviceIamMember:ServiceIamMember');
  expect(grants.map((r) => r.name)).toContainEqual(expect.stringMatching(/^group-data-eng/));
  // As the engine receives them: every function exits on an invalid configuration (ADR-2004).
  const fns = hosted.filter((r) => r.type === 'gcp:cloudfunctionsv2/function:Function');
  expect(fns.map((f) => f.name).sort()).toEqual(['backfill', 'reader', 'scheduler', 'writer']);
  for (const f of fns) {
    expect(f.inputs.serviceConfig).toMatchObject({
      allTrafficOnLatestRevision: true,
      environmentVariables: { SLUICE_ON_INVALID_CONFIG: 'exit', SLUICE_FUNCTION: f.name },
    });
  }
}, 240_000);

test('a misspelt top-level key fails the preview, naming the key it resembles', () => {
  const { 'sluice:operators': operators, ...rest } = config;
  const result = runProgram({ ...rest, 'sluice:operator': operators });
  expect(result.status).not.toBe(0);
  expect(result.errors.join('\n')).toContain('sluice:operator: unknown key; did you mean sluice:operators?');
  // Refused before anything is registered: no deployment without the operators' grant.
  expect(result.resources.filter((r) => r.type !== 'pulumi:pulumi:Stack')).toEqual([]);
}, 240_000);

test('a source changed after the build is refused, naming the file, before anything is registered', () => {
  const source = join(ROOT, 'shared', 'domain', 'timestamp.ts');
  const { atime, mtime } = statSync(source);
  // Edited after `npm run build`: newer than its compiled file.
  const later = new Date(Date.now() + 60_000);
  utimesSync(source, later, later);
  try {
    const result = runProgram(config);
    expect(result.status).not.toBe(0);
    expect(result.errors.join('\n')).toContain(
      'the function build in dist/ is older than its sources (shared/domain/timestamp.ts): run `npm run build` first',
    );
    expect(result.resources.filter((r) => r.type !== 'pulumi:pulumi:Stack')).toEqual([]);
  } finally {
    utimesSync(source, atime, mtime);
  }
}, 240_000);
