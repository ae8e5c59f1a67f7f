/**
 * `npx sluice check-config <stack file>`: a stack file checked by the Pulumi program's own settings builder,
 * without the Pulumi CLI or an operator URL. A valid file: a summary and exit 0; a bad one: every problem
 * with its config key and exit 1; a file that is not a stack file: exit 2 naming it.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { main } from '../../cli/main';

const EXAMPLE = join(__dirname, '..', '..', 'infra', 'Pulumi.example.yaml');

async function check(file: string): Promise<{ code: number; lines: string[] }> {
  const lines: string[] = [];
  const code = await main(['check-config', file], {}, { out: (l) => lines.push(l) });
  return { code, lines };
}

function stackFile(text: string): string {
  const file = join(mkdtempSync(join(tmpdir(), 'sluice-stack-')), 'Pulumi.test.yaml');
  writeFileSync(file, text);
  return file;
}

it('the example stack file is valid: exit 0 and a summary of what would be deployed', async () => {
  const { code, lines } = await check(EXAMPLE);
  expect(code).toBe(0);
  expect(lines[0]).toBe(`${EXAMPLE}: valid`);
  expect(lines.join('\n')).toContain('spanner main/orders, stream OrdersStream; dataset orders_replica');
});

it('a bad stack file: every problem with its key, exit 1', async () => {
  const text = readFileSync(EXAMPLE, 'utf8')
    .replace('stream: OrdersStream', 'stream: bad-name')
    .replace('mode: scheduled', 'mode: fast')
    .replace('gcp:region: europe-west1', 'gcp:region: nowhere')
    .replace(
      'sluice:dataBoost: false',
      'sluice:dataBoost: false\n  sluice:operater: []\n  sluice:functions:\n    reader: { memory: lots }',
    );
  const { code, lines } = await check(stackFile(text));
  expect(code).toBe(1);
  expect(lines[0]).toMatch(/Pulumi\.test\.yaml: 5 problems$/);
  const keys = lines.slice(1).map((l) => l.trim().split(': ')[0]);
  expect(keys.sort()).toEqual(
    [
      'gcp:region',
      'sluice:functions.reader.memory',
      'sluice:operater',
      'sluice:pipeline.mode',
      'sluice:pipeline.spanner.stream',
    ].sort(),
  );
  expect(lines.join('\n')).toContain('sluice:operater: unknown key; did you mean sluice:operators?');
});

it('a file that is not a stack file is named, exit 2', async () => {
  const { code, lines } = await check(stackFile('just: [a, list'));
  expect(code).toBe(2);
  expect(lines[0]).toMatch(/^error: .*Pulumi\.test\.yaml: not YAML/);
  expect((await check(stackFile('name: sluice\n'))).lines[0]).toMatch(/no config: map/);
});
