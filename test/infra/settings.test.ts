/** A bad stack configuration fails at preview with the field named; a good one is turned into settings. */

import { StackConfigError } from '../../infra/config-error';
import { pipelineEnvironment } from '../../infra/pipeline-adapter';
import { buildSettings } from '../../infra/settings';
import { parseConfig, parseConfigObject } from '../../shared/domain/config';
import { stackConfig } from './harness';

function problems(patch: Parameters<typeof stackConfig>[0]): string[] {
  try {
    buildSettings(stackConfig(patch));
  } catch (err) {
    if (err instanceof StackConfigError) return err.issues.map((i) => `${i.path}: ${i.message}`);
    throw err;
  }
  return [];
}

const pipeline = stackConfig().pipeline as Record<string, unknown>;

test('a valid configuration has no problems', () => {
  expect(problems({})).toEqual([]);
});

test('pipeline errors come from the shared schema, under sluice:pipeline, every one of them', () => {
  const bad = {
    ...pipeline,
    spanner: { instance: 'main', database: 'orders', stream: 'bad-name' },
    mode: 'fast',
  };
  const found = problems({ pipeline: bad });
  expect(found).toHaveLength(2);
  expect(found[0]).toMatch(/^sluice:pipeline\.spanner\.stream: /);
  expect(found[1]).toMatch(/^sluice:pipeline\.mode: /);
});

test('missing pipeline, project and region are each named', () => {
  expect(problems({ pipeline: undefined, project: undefined, region: 'nowhere' })).toEqual([
    'gcp:project: required',
    expect.stringMatching(/^gcp:region: must match/),
    'sluice:pipeline: required: the pipeline configuration object',
  ]);
});

test('the pipeline project must be the project deployed into', () => {
  expect(problems({ pipeline: { ...pipeline, project: 'other-project' } })).toEqual([
    'sluice:pipeline.project: must equal gcp:project (acme-prod)',
  ]);
});

test('deployment keys are checked too, and unknown keys are refused (typos)', () => {
  expect(problems({ deployment: { functions: { reader: { memory: '3000MB' } }, dataBost: true } })).toEqual([
    expect.stringMatching(/^sluice:functions\.reader\.memory: memory like/),
    expect.stringMatching(/^sluice:dataBost: /),
  ]);
});

test('a reader timeout shorter than the window is refused, naming the timeout', () => {
  expect(problems({ deployment: { functions: { reader: { timeoutSeconds: 300 } } } })).toEqual([
    'sluice:functions.reader.timeoutSeconds: must be at least 660 (the longest window, 600s, plus 60s to flush)',
  ]);
});

test('concurrency above one without a full vCPU is refused', () => {
  expect(problems({ deployment: { functions: { backfill: { cpu: 0.5 } } } })).toEqual([
    'sluice:functions.backfill.cpu: concurrency above 1 needs at least 1 vCPU',
  ]);
});

test('continuous mode sizes the reader for long polls', () => {
  const s = buildSettings(
    stackConfig({
      pipeline: { ...pipeline, mode: 'continuous', window: { maxMs: 300_000, longPollMs: 240_000 } },
    }),
  );
  expect(s.functions.reader).toMatchObject({ timeoutSeconds: 360, concurrency: 32 });
  expect(s.queues.reader.maxConcurrentDispatches).toBe(320);
});

test('the function environment parses back to the same pipeline configuration (one source of truth)', () => {
  const input = {
    ...pipeline,
    project: 'acme-prod',
    ledger: { bucket: 'acme-ledger' },
    startAt: '2026-01-02T03:04:05.123456789Z',
    heartbeatMs: 5000,
  };
  const config = parseConfigObject(input);
  expect(parseConfig(pipelineEnvironment(config))).toEqual(config);
  const s = buildSettings(stackConfig({ pipeline: input }));
  expect(parseConfig(s.environment)).toEqual(config);
  expect(s.names.ledgerBucket).toBe('acme-ledger');
});

test('unknown top-level keys are refused, with the nearest known key or the list of keys', () => {
  expect(problems({ unknownKeys: ['operator', 'colour'] })).toEqual([
    'sluice:operator: unknown key; did you mean sluice:operators?',
    expect.stringMatching(/^sluice:colour: unknown key; known keys: sluice:pipeline, sluice:prefix, /),
  ]);
});

test('a writer dead-letter prefix reaching the ledger paths is refused: the writer could forge what the others replay', () => {
  for (const deadLetterPrefix of ['sluice/dead-letters/', 'sluice/', 'sluice/dead-letters/stream/Orders/'])
    expect(problems({ deployment: { writer: { deadLetterPrefix } } })).toEqual([
      expect.stringMatching(
        new RegExp(
          `^sluice:writer\\.deadLetterPrefix: "${deadLetterPrefix}" must not overlap the ledger's paths`,
        ),
      ),
    ]);
  expect(problems({ deployment: { writer: { deadLetterPrefix: 'producers/dead-letters/' } } })).toEqual([]);
});

test("every function is told the writer's dead-letter prefix, so the status and the operator routes list its letters there", () => {
  const custom = buildSettings(
    stackConfig({ deployment: { writer: { deadLetterPrefix: 'producers/dead-letters/' } } }),
  );
  expect(custom.environment.SLUICE_WRITER_DEAD_LETTER_PREFIX).toBe('producers/dead-letters/');
  expect(buildSettings(stackConfig({})).environment.SLUICE_WRITER_DEAD_LETTER_PREFIX).toBe(
    'writer-dead-letters/sluice/',
  );
});
