/**
 * The OpenLineage run event, as much of it as sluice emits (spec 2-0-2: `RunEvent`, and the facets
 * `schema`, `columnLineage`, `jobType`, `errorMessage`). Plain JSON-able types: the event is logged as it
 * is and sent to the Data Lineage API as a protobuf Struct.
 */

/** The OpenLineage spec version the events follow. */
export const OPEN_LINEAGE_SCHEMA_URL = 'https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent';

/** Schema URLs of the facets sluice writes (each facet names the version of its own schema). */
export const FACET_SCHEMA_URLS = {
  schema: 'https://openlineage.io/spec/facets/1-1-1/SchemaDatasetFacet.json#/$defs/SchemaDatasetFacet',
  columnLineage:
    'https://openlineage.io/spec/facets/1-2-0/ColumnLineageDatasetFacet.json#/$defs/ColumnLineageDatasetFacet',
  jobType: 'https://openlineage.io/spec/facets/2-0-3/JobTypeJobFacet.json#/$defs/JobTypeJobFacet',
  errorMessage:
    'https://openlineage.io/spec/facets/1-0-1/ErrorMessageRunFacet.json#/$defs/ErrorMessageRunFacet',
} as const;

/**
 * The `producer` of every event and facet. OpenLineage asks for a URI naming the emitting code and its
 * version; the project has no canonical URL, so a URN carries the name and release.
 */
export const PRODUCER = 'urn:sluice:0.1.0';

/** Run state transitions. A streaming job's run has START, RUNNING heartbeats and ends FAIL or ABORT. */
export type RunEventType = 'START' | 'RUNNING' | 'COMPLETE' | 'ABORT' | 'FAIL';

/** Fields every facet carries. */
export interface BaseFacet {
  _producer: string;
  _schemaURL: string;
}

/** One field of a dataset's schema facet. */
export interface SchemaField {
  name: string;
  type: string;
}

/** `facets.schema` of a dataset. */
export interface SchemaFacet extends BaseFacet {
  fields: SchemaField[];
}

/** One input column a destination column is computed from. */
export interface InputField {
  namespace: string;
  name: string;
  field: string;
  transformations: Array<{ type: 'DIRECT' | 'INDIRECT'; subtype: string; description?: string }>;
}

/** `facets.columnLineage` of an output dataset: destination column → the input columns it comes from. */
export interface ColumnLineageFacet extends BaseFacet {
  fields: Record<string, { inputFields: InputField[] }>;
}

/** A dataset as OpenLineage names it: `namespace` is the data source, `name` the table within it. */
export interface Dataset {
  namespace: string;
  name: string;
  facets?: { schema?: SchemaFacet; columnLineage?: ColumnLineageFacet };
}

/** `facets.jobType` of a job. */
export interface JobTypeFacet extends BaseFacet {
  processingType: 'STREAMING' | 'BATCH';
  integration: string;
  jobType: string;
}

/** `facets.errorMessage` of a failed run. */
export interface ErrorMessageFacet extends BaseFacet {
  message: string;
  programmingLanguage: string;
}

/** One OpenLineage run event. */
export interface RunEvent {
  eventType: RunEventType;
  /** RFC 3339 with nanoseconds, UTC. */
  eventTime: string;
  producer: string;
  schemaURL: string;
  run: { runId: string; facets?: { errorMessage?: ErrorMessageFacet } };
  job: { namespace: string; name: string; facets: { jobType: JobTypeFacet } };
  inputs: Dataset[];
  outputs: Dataset[];
}

/** A facet's base fields. */
export function facetBase(schemaURL: string): BaseFacet {
  return { _producer: PRODUCER, _schemaURL: schemaURL };
}
