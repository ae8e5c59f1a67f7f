/**
 * Row values in the writer's logs (ADR-2307), on the emulators through the functions framework: a request
 * refused for a value holding an SSN-like text answers the producer with the value, and logs
 * `writer.rejected` without it under the default SLUICE_LOG_VALUES=none, with it under `all`.
 */
process.env.METADATA_SERVER_DETECTION = 'none';

import { dialectOf, useWriterStack } from './support/use-writer-stack';
import { post } from './support/writer-stack';

const SSN = '123-45-6789';
const stack = useWriterStack();

const { db, m, id } = dialectOf(stack, 'GOOGLE_STANDARD_SQL');

/** Posts one mutation whose FLOAT64 column holds the SSN; returns the answer and the writer.rejected line. */
async function refused(env: Record<string, string>) {
  const url = await stack.serve(db(), env);
  const from = stack.lines.length;
  const a = await post(url, { mutations: [m('insert', 'Customers', { Id: id(1), Score: SSN })] });
  const lines = stack.lines.slice(from);
  return { a, lines, rejected: lines.filter((l) => l.event === 'writer.rejected') };
}

test('default: writer.rejected names the column and the type, not the value; the producer is told the value', async () => {
  const { a, lines, rejected } = await refused({});
  expect(a.status).toBe(400);
  expect(JSON.stringify(a.body)).toContain(SSN);
  expect(rejected).toHaveLength(1);
  expect(rejected[0]!.problems).toEqual([
    'mutations[0].row.Score: expected FLOAT64 (a number, or "NaN", "Infinity", "-Infinity"), got a string [value redacted]',
  ]);
  expect(JSON.stringify(lines)).not.toContain(SSN);
});

test('SLUICE_LOG_VALUES=all: writer.rejected quotes the value as before', async () => {
  const { rejected } = await refused({ SLUICE_LOG_VALUES: 'all' });
  expect(JSON.stringify(rejected)).toContain(SSN);
});

test("a failed mutation's Spanner message, which names the row's key, is logged as a key: hashed by default", async () => {
  const url = await stack.serve(db(), {});
  const all = await stack.serve(db(), { SLUICE_LOG_VALUES: 'all' });
  // An update of a row that does not exist: NOT_FOUND, whose message names the key (Spanner's wording).
  const failure = async (at: string) => {
    const from = stack.lines.length;
    const a = await post(at, { mutations: [m('update', 'Customers', { Id: id(404), Name: 'ghost' })] });
    expect(a.status).toBe(422);
    const line = stack.lines.slice(from).find((l) => l.event === 'writer.request')!;
    const [first] = line.firstFailures as Array<{ result: { status: { code: number; message: string } } }>;
    return first!.result.status;
  };
  const hidden = await failure(url);
  expect(hidden.code).toBe(5);
  expect(hidden.message).toMatch(/^key#[0-9a-f]{16}$/);
  expect((await failure(all)).message).toContain(id(404));
});

test('a bad SLUICE_LOG_VALUES refuses to start, naming the variable', async () => {
  await expect(refused({ SLUICE_LOG_VALUES: 'everything' })).rejects.toThrow(
    /SLUICE_LOG_VALUES: must be none, keys or all/,
  );
});
