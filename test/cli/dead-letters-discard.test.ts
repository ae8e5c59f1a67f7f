/**
 * Discarding dead letters and listing the writer's (ADR-2202, ADR-2203) on the local stack, through HTTP and
 * `npx sluice` run as a child process: two stream letters (customers without an email, which the hand-made
 * replica requires) and one writer letter (an insert of an existing customer, ALREADY_EXISTS). The writer's
 * letter is listed with its source and request id and counted in the status; a discard records who, when and
 * why, hides the letter from the default listing and from the pending counts; an unknown id is a 404 naming
 * it, a replayed letter a 409; a discarded letter is never replayed, a writer letter never either.
 */
process.env.METADATA_SERVER_DETECTION = 'none';

import { Random } from '../../local/random';
import type { LocalStack } from '../../local/stack';
import { LOCAL } from '../../local/stack-config';
import { rowValues } from '../../local/values';
import { until } from '../e2e/support/failures';
import { startStrictReplicaStack } from '../e2e/support/strict-replica';
import { runSluice } from './support/child';

let stack: LocalStack;
let url: string;

/** `sluice …` as a child process (the CLI as an operator runs it): exit code and stdout. */
const sluice = (...argv: string[]) => runSluice(url, argv);

async function post(path: string, body: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

type Listed = { id: string; state: string; source: string; table: string; origin?: string; key?: string };
async function listed(query = ''): Promise<{ items: Listed[]; counts: Record<string, unknown> }> {
  return (await (await fetch(`${url}/dead-letters${query}`)).json()) as never;
}

async function deadLetterCounts(): Promise<{ pending: number; writer?: { pending: number } } | undefined> {
  const s = (await (await fetch(`${url}/status`)).json()) as { deadLetters?: never };
  return s.deadLetters;
}

beforeAll(async () => {
  // The customers replica made by hand with `email` REQUIRED: a customer without one is a dead letter.
  stack = await startStrictReplicaStack();
  url = stack.ready.functions.backfill!;
  const t = stack.schema.customers;
  const rng = new Random(5);
  const rows = [9001, 9002].map((id) => ({ ...rowValues(t, { customer_id: String(id) }, rng), email: null }));
  await stack.database.table(t.name).insert(rows);
  await until(
    'two stream dead letters',
    async () => ((await listed('?state=pending')).items.length === 2 ? true : undefined),
    90_000,
  );
}, 180_000);

afterAll(async () => {
  await stack?.stop();
});

let writerId = '';
let requestId = '';

it("lists the writer's ALREADY_EXISTS letter with its source, request id, table and key; the status counts it", async () => {
  const writer = stack.ready.functions.writer!;
  const row = {
    customer_id: '9001',
    name: 'again',
    balance: '1',
    active: true,
    updated_at: '2026-01-01T00:00:00Z',
  };
  const res = await fetch(`${writer}/mutations`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ mutations: [{ op: 'insert', table: 'Customers', row }] }),
  });
  const answer = (await res.json()) as { routed?: number; deadLetter?: string };
  expect(answer).toMatchObject({ routed: 1, deadLetter: expect.stringContaining('writer-dead-letters/') });
  requestId = /Z-([^/]+)\.json$/.exec(answer.deadLetter!)![1]!;
  const letter = (await listed()).items.find((i) => i.source === 'writer');
  expect(letter).toMatchObject({
    source: 'writer',
    state: 'pending',
    table: 'Customers',
    key: '["9001"]',
    origin: `request ${requestId}`,
    reason: 'writer:ALREADY_EXISTS',
    replayable: false,
  });
  writerId = letter!.id;
  const cli = await sluice('dead-letters', 'list');
  expect(cli.code).toBe(0);
  expect(cli.out).toMatch(
    new RegExp(
      `^${writerId.replace(/[.]/g, '\\.')} +pending +Customers +\\["9001"\\] .* writer request ${requestId} `,
      'm',
    ),
  );
  expect(cli.out).toContain('not replayable into BigQuery');
  expect(cli.out).toContain('pending 3 (2 records, writer 1)');
  await until(
    'the writer letter in the status',
    async () => ((await deadLetterCounts())?.writer?.pending === 1 ? true : undefined),
    30_000,
  );
  expect((await deadLetterCounts())?.pending).toBe(3);
  const status = await sluice('status');
  expect(status.out).toMatch(/^ {2}dead letters 3 pending \(2 records\): Customers 2; writer 1 /m);
  expect(status.code).toBe(3);
  const replay = await post('/dead-letters/replay', { ids: [writerId] });
  expect(replay.status).toBe(400);
  expect(String((replay.body.error as { message: string }).message)).toContain('is a writer dead letter');
}, 120_000);

it('refuses an unknown id with a 404 naming it, and discards nothing of the request', async () => {
  const [first] = (await listed('?state=pending')).items.filter((i) => i.source === 'stream');
  const unknown = 'Customers/20260101T000000000000000Z-0123456789abcdef';
  const http = await post('/dead-letters/discard', { ids: [first!.id, unknown] });
  expect(http).toMatchObject({
    status: 404,
    body: { error: { code: 404, message: `no dead letter ${unknown}` } },
  });
  expect((await listed('?state=pending')).items.map((i) => i.id)).toContain(first!.id);
  const cli = await sluice('dead-letters', 'discard', unknown);
  expect(cli.code).toBe(1);
  expect(cli.out).toContain(`404 no dead letter ${unknown}`);
}, 60_000);

it('discards a letter with who, when and why: hidden by default, shown with --all, no longer pending', async () => {
  const [first] = (await listed('?state=pending')).items.filter((i) => i.source === 'stream');
  const out = await sluice('dead-letters', 'discard', first!.id, '--reason', 'customer 9001 fixed by hand');
  expect(out.code).toBe(0);
  expect(out.out).toMatch(new RegExp(`^discarded +${first!.id}$`, 'm'));
  expect(out.out).toContain('discarded 1, already discarded 0, by local');
  const plain = await sluice('dead-letters', 'list');
  expect(plain.out).not.toContain(first!.id);
  const all = await sluice('dead-letters', 'list', '--all');
  expect(all.out).toMatch(new RegExp(`^${first!.id} +discarded +Customers `, 'm'));
  expect(all.out).toMatch(
    new RegExp(
      `^discarded ${first!.id} by local at \\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z: customer 9001 fixed by hand$`,
      'm',
    ),
  );
  expect(all.out).toContain('pending 2 (1 records, writer 1), replayed 0, discarded 1');
  // Discarding again is no change; a replay never applies a discarded letter (and says so: exit 1).
  expect((await post('/dead-letters/discard', { ids: [first!.id] })).body).toMatchObject({
    discarded: 0,
    alreadyDiscarded: 1,
  });
  const replay = await sluice('dead-letters', 'replay', first!.id);
  expect(replay.out).toMatch(new RegExp(`^discarded +${first!.id}`, 'm'));
  expect(replay.code).toBe(1);
  await until(
    'one fewer pending letter',
    async () => ((await deadLetterCounts())?.pending === 2 ? true : undefined),
    30_000,
  );
}, 120_000);

it("records the caller's identity: the bearer token's email claim, else IAP's header", async () => {
  const payload = Buffer.from(JSON.stringify({ email: 'ops@example.com', aud: 'x' })).toString('base64url');
  const jwt = `eyJhbGciOiJSUzI1NiJ9.${payload}.c2ln`;
  const byToken = await post(
    '/dead-letters/discard',
    { ids: [writerId], reason: 'duplicate of 9001' },
    {
      authorization: `Bearer ${jwt}`,
    },
  );
  expect(byToken).toMatchObject({ status: 200, body: { discarded: 1, by: 'ops@example.com' } });
  const item = (await listed()).items.find((i) => i.id === writerId);
  expect(item).toMatchObject({
    state: 'discarded',
    discardedBy: 'ops@example.com',
    discardReason: 'duplicate of 9001',
  });
  const byIap = await post(
    '/dead-letters/discard',
    { ids: [writerId] },
    {
      'x-goog-authenticated-user-email': 'accounts.google.com:sre@example.com',
    },
  );
  expect(byIap.body).toMatchObject({ by: 'sre@example.com', alreadyDiscarded: 1 });
  await until(
    'no writer letter pending',
    async () => ((await deadLetterCounts())?.writer?.pending === 0 ? true : undefined),
    30_000,
  );
}, 60_000);

it('refuses to discard a replayed letter with a 409', async () => {
  const table = stack.emulators.bigquery.bigquery().dataset(LOCAL.dataset).table('customers');
  const [metadata] = await table.getMetadata();
  const fields = (metadata.schema.fields as Array<{ name: string; mode?: string }>).map((f) =>
    f.name === 'email' ? { ...f, mode: 'NULLABLE' } : f,
  );
  await table.setMetadata({ schema: { fields } });
  const [left] = (await listed('?state=pending')).items.filter((i) => i.source === 'stream');
  expect((await sluice('dead-letters', 'replay', left!.id)).code).toBe(0);
  const http = await post('/dead-letters/discard', { ids: [left!.id] });
  expect(http.status).toBe(409);
  expect(String((http.body.error as { message: string }).message)).toMatch(
    new RegExp(`dead letter ${left!.id} was replayed at \\d{4}-.*Z: a replayed letter is not discarded`),
  );
  const cli = await sluice('dead-letters', 'discard', '--table', 'Customers');
  expect(cli).toMatchObject({ code: 0 });
  expect(cli.out).toContain('discarded 0, already discarded 0, by local');
}, 120_000);
