/** OpenLineage run events of a pipeline and a backfill: shape (against the spec's schema), names, lineage. */
import type { TableSchema } from '../../../../shared/domain/information-schema';
import {
  backfillRunId,
  edgesOf,
  type LineageScope,
  type LineageTable,
  nameBasedUuid,
  pipelineRunId,
  runEvent,
} from '../../../../shared/domain/lineage/events';
import type { RunEventType } from '../../../../shared/domain/lineage/open-lineage';
import { fromStruct, toStruct } from '../../../../shared/domain/lineage/struct';
import { addNanos, parseTimestamp } from '../../../../shared/domain/timestamp';
import { tableOf } from '../support/table-schemas';
import { runEventProblems } from './open-lineage-schema';

const scope: LineageScope = {
  pipeline: 'orders-pipe',
  project: 'acme-prod',
  instance: 'main-inst',
  database: 'shop',
  dataset: 'analytics',
};

const orders: TableSchema = {
  name: 'Orders',
  primaryKey: ['Region', 'OrderId'],
  columns: [
    { name: 'OrderId', type: { code: 'INT64' }, nullable: false, ordinalPosition: 1 },
    { name: 'Region', type: { code: 'STRING' }, nullable: false, ordinalPosition: 2 },
    {
      name: 'Total',
      type: { code: 'NUMERIC', typeAnnotation: 'PG_NUMERIC' },
      nullable: true,
      ordinalPosition: 3,
    },
    { name: 'Secret', type: { code: 'BYTES' }, nullable: true, ordinalPosition: 4 },
    {
      name: 'Tags',
      type: { code: 'ARRAY', arrayElementType: { code: 'STRING' } },
      nullable: true,
      ordinalPosition: 5,
    },
  ],
};

const customers = tableOf(
  'Customers',
  ['CustomerId'],
  [
    ['CustomerId', 'INT64'],
    ['Name', 'STRING'],
  ],
);

const tables: LineageTable[] = [
  { schema: orders, watched: ['Total', 'Tags'], replica: 'orders', history: 'changes' },
  { schema: customers, watched: 'all', history: 'changes' },
];

const at = parseTimestamp('2026-12-01T10:00:00.123456789Z');
const runId = pipelineRunId(scope, 0, at);

describe('lineage run events', () => {
  it.each<RunEventType>(['START', 'RUNNING', 'FAIL', 'ABORT', 'COMPLETE'])(
    'a %s event conforms to the OpenLineage run-event schema',
    (eventType) => {
      const kind = eventType === 'COMPLETE' ? 'backfill' : 'pipeline';
      const error = eventType === 'FAIL' ? 'retention expired' : undefined;
      const event = runEvent(scope, kind, { eventType, at, runId, error }, tables);
      expect(runEventProblems(event)).toEqual([]);
      expect(event.eventTime).toBe('2026-12-01T10:00:00.123456789Z');
    },
  );

  it('the schema check catches what a consumer would reject', () => {
    const event = runEvent(scope, 'pipeline', { eventType: 'START', at, runId }, tables);
    expect(runEventProblems({ ...event, run: { runId: 'not-a-uuid' } })).toEqual([
      '/run/runId must match format "uuid"',
    ]);
    const { producer: _p, ...noProducer } = event;
    expect(runEventProblems(noProducer)).toEqual(["/ must have required property 'producer'"]);
  });

  it('names Spanner inputs as the connector does, with a schema facet of every column', () => {
    const event = runEvent(scope, 'pipeline', { eventType: 'START', at, runId }, tables);
    expect(event.inputs.map((i) => [i.namespace, i.name])).toEqual([
      ['spanner://acme-prod:main-inst', 'shop.Orders'],
      ['spanner://acme-prod:main-inst', 'shop.Customers'],
    ]);
    expect(event.inputs[0]?.facets?.schema?.fields).toEqual([
      { name: 'OrderId', type: 'INT64' },
      { name: 'Region', type: 'STRING' },
      { name: 'Total', type: 'NUMERIC(PG_NUMERIC)' },
      { name: 'Secret', type: 'BYTES' },
      { name: 'Tags', type: 'ARRAY<STRING>' },
    ]);
  });

  it('names BigQuery outputs <project>.<dataset>.<table>, a shared history table once', () => {
    const event = runEvent(scope, 'pipeline', { eventType: 'START', at, runId }, tables);
    expect(event.outputs.map((o) => [o.namespace, o.name])).toEqual([
      ['bigquery', 'acme-prod.analytics.orders'],
      ['bigquery', 'acme-prod.analytics.changes'],
    ]);
  });

  it('maps each replicated column to its source; unwatched columns carry no lineage', () => {
    const event = runEvent(scope, 'pipeline', { eventType: 'START', at, runId }, tables);
    const replica = event.outputs[0]?.facets?.columnLineage?.fields ?? {};
    expect(Object.keys(replica)).toEqual(['OrderId', 'Region', 'Total', 'Tags']);
    expect(replica.Total?.inputFields).toEqual([
      {
        namespace: 'spanner://acme-prod:main-inst',
        name: 'shop.Orders',
        field: 'Total',
        transformations: [{ type: 'DIRECT', subtype: 'IDENTITY' }],
      },
    ]);
  });

  it('history columns: keys from every key column, values from the watched columns of every table', () => {
    const event = runEvent(scope, 'pipeline', { eventType: 'START', at, runId }, tables);
    const history = event.outputs[1]?.facets?.columnLineage?.fields ?? {};
    const sources = (c: string) => history[c]?.inputFields.map((f) => `${f.name}.${f.field}`);
    expect(sources('keys')).toEqual([
      'shop.Orders.Region',
      'shop.Orders.OrderId',
      'shop.Customers.CustomerId',
    ]);
    expect(sources('new_values')).toEqual(['shop.Orders.Total', 'shop.Orders.Tags', 'shop.Customers.Name']);
    expect(sources('old_values')).toEqual(sources('new_values'));
  });

  it('identifies the jobs: a streaming pipeline, a batch backfill', () => {
    const pipeline = runEvent(scope, 'pipeline', { eventType: 'START', at, runId }, tables).job;
    const backfill = runEvent(scope, 'backfill', { eventType: 'START', at, runId }, tables).job;
    expect([pipeline.namespace, pipeline.name, pipeline.facets.jobType.processingType]).toEqual([
      'sluice://acme-prod',
      'orders-pipe',
      'STREAMING',
    ]);
    expect([backfill.name, backfill.facets.jobType.processingType]).toEqual([
      'orders-pipe.backfill',
      'BATCH',
    ]);
  });

  it('a FAIL event says why', () => {
    const event = runEvent(scope, 'pipeline', { eventType: 'FAIL', at, runId, error: 'boom' }, tables);
    expect(event.run.facets?.errorMessage?.message).toBe('boom');
  });

  it('run ids are UUIDs, stable for one run and distinct between runs', () => {
    expect(pipelineRunId(scope, 0, at)).toBe(runId);
    expect(runId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(pipelineRunId(scope, 1, at)).not.toBe(runId);
    expect(pipelineRunId(scope, 0, addNanos(at, 1n))).not.toBe(runId);
    expect(backfillRunId(scope, 'job-1', at)).not.toBe(backfillRunId(scope, 'job-2', at));
    expect(nameBasedUuid('a')).not.toBe(nameBasedUuid('b'));
  });

  it('enriched columns: DIRECT/IDENTITY from the dimension column, INDIRECT/JOIN from the join key', () => {
    const lookups = [
      { table: 'Regions', key: { Code: 'Region' }, columns: ['Label'], mode: 'as-of-commit' as const },
    ];
    const enriched: LineageTable[] = [{ ...tables[0]!, lookups }];
    const event = runEvent(scope, 'pipeline', { eventType: 'START', at, runId }, enriched);
    expect(runEventProblems(event)).toEqual([]);
    expect(event.inputs.map((i) => i.name)).toEqual(['shop.Orders', 'shop.Regions']);
    for (const out of event.outputs) {
      const field = out.facets?.columnLineage?.fields.regions_Label;
      expect(field?.inputFields).toEqual([
        {
          namespace: 'spanner://acme-prod:main-inst',
          name: 'shop.Regions',
          field: 'Label',
          transformations: [{ type: 'DIRECT', subtype: 'IDENTITY' }],
        },
        {
          namespace: 'spanner://acme-prod:main-inst',
          name: 'shop.Orders',
          field: 'Region',
          transformations: [
            { type: 'INDIRECT', subtype: 'JOIN', description: 'primary-key lookup of the dimension table' },
          ],
        },
      ]);
    }
  });

  it('lists the column edges source → destination', () => {
    const event = runEvent(scope, 'pipeline', { eventType: 'START', at, runId }, tables);
    const edges = edgesOf(event);
    expect(edges).toContainEqual({ source: 'shop.Orders.Total', target: 'acme-prod.analytics.orders.Total' });
    expect(edges).toContainEqual({
      source: 'shop.Customers.Name',
      target: 'acme-prod.analytics.changes.new_values',
    });
    expect(edges).toHaveLength(4 + 3 + 3 * 2);
  });

  it('an event goes through a protobuf Struct and back unchanged', () => {
    const event = runEvent(scope, 'pipeline', { eventType: 'FAIL', at, runId, error: 'x' }, tables);
    const json = JSON.parse(JSON.stringify(event));
    expect(fromStruct(toStruct(json))).toEqual(json);
    expect(fromStruct(toStruct({ n: null, b: false, f: 1.5, a: [1, 'x', { y: [] }] }))).toEqual({
      n: null,
      b: false,
      f: 1.5,
      a: [1, 'x', { y: [] }],
    });
    expect(() => toStruct({ bad: Number.NaN })).toThrow('NaN');
  });
});
