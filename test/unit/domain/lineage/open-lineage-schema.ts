/**
 * The OpenLineage run-event shape (spec 2-0-2) and the facets sluice emits (SchemaDatasetFacet 1-1-1,
 * ColumnLineageDatasetFacet 1-2-0, JobTypeJobFacet 2-0-3, ErrorMessageRunFacet 1-0-1), written here as a
 * JSON Schema (draft 2020-12) from the published specification: required fields, formats and enums as the
 * spec states them, so an event that a conforming consumer would reject fails the tests.
 */
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';

const baseFacet = {
  type: 'object',
  properties: {
    _producer: { type: 'string', format: 'uri' },
    _schemaURL: { type: 'string', format: 'uri' },
  },
  required: ['_producer', '_schemaURL'],
  additionalProperties: true,
};

const schemaFacet = {
  allOf: [
    { $ref: '#/$defs/BaseFacet' },
    {
      type: 'object',
      properties: {
        fields: {
          type: 'array',
          items: {
            type: 'object',
            properties: {
              name: { type: 'string' },
              type: { type: 'string' },
              description: { type: 'string' },
              fields: { type: 'array' },
            },
            required: ['name'],
          },
        },
      },
      required: ['fields'],
    },
  ],
};

const columnLineageFacet = {
  allOf: [
    { $ref: '#/$defs/BaseFacet' },
    {
      type: 'object',
      properties: {
        fields: {
          type: 'object',
          additionalProperties: {
            type: 'object',
            properties: {
              inputFields: {
                type: 'array',
                items: {
                  type: 'object',
                  properties: {
                    namespace: { type: 'string' },
                    name: { type: 'string' },
                    field: { type: 'string' },
                    transformations: {
                      type: 'array',
                      items: {
                        type: 'object',
                        properties: {
                          type: { type: 'string', enum: ['DIRECT', 'INDIRECT'] },
                          subtype: { type: 'string' },
                          description: { type: 'string' },
                          masking: { type: 'boolean' },
                        },
                        required: ['type'],
                      },
                    },
                  },
                  required: ['namespace', 'name', 'field'],
                },
              },
            },
            required: ['inputFields'],
            additionalProperties: false,
          },
        },
      },
      required: ['fields'],
    },
  ],
};

const dataset = {
  type: 'object',
  properties: {
    namespace: { type: 'string', minLength: 1 },
    name: { type: 'string', minLength: 1 },
    facets: {
      type: 'object',
      properties: {
        schema: { $ref: '#/$defs/SchemaDatasetFacet' },
        columnLineage: { $ref: '#/$defs/ColumnLineageDatasetFacet' },
      },
      additionalProperties: { $ref: '#/$defs/BaseFacet' },
    },
  },
  required: ['namespace', 'name'],
};

/** The schema of one run event. */
export const RUN_EVENT_SCHEMA = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  $defs: {
    BaseFacet: baseFacet,
    SchemaDatasetFacet: schemaFacet,
    ColumnLineageDatasetFacet: columnLineageFacet,
    Dataset: dataset,
    JobTypeJobFacet: {
      allOf: [
        { $ref: '#/$defs/BaseFacet' },
        {
          type: 'object',
          properties: {
            processingType: { type: 'string', enum: ['BATCH', 'STREAMING', 'SERVICE'] },
            integration: { type: 'string' },
            jobType: { type: 'string' },
          },
          required: ['processingType', 'integration'],
        },
      ],
    },
    ErrorMessageRunFacet: {
      allOf: [
        { $ref: '#/$defs/BaseFacet' },
        {
          type: 'object',
          properties: { message: { type: 'string' }, programmingLanguage: { type: 'string' } },
          required: ['message', 'programmingLanguage'],
        },
      ],
    },
  },
  type: 'object',
  properties: {
    eventType: { type: 'string', enum: ['START', 'RUNNING', 'COMPLETE', 'ABORT', 'FAIL', 'OTHER'] },
    eventTime: { type: 'string', format: 'date-time' },
    producer: { type: 'string', format: 'uri' },
    schemaURL: { type: 'string', format: 'uri' },
    run: {
      type: 'object',
      properties: {
        runId: { type: 'string', format: 'uuid' },
        facets: {
          type: 'object',
          properties: { errorMessage: { $ref: '#/$defs/ErrorMessageRunFacet' } },
          additionalProperties: { $ref: '#/$defs/BaseFacet' },
        },
      },
      required: ['runId'],
    },
    job: {
      type: 'object',
      properties: {
        namespace: { type: 'string', minLength: 1 },
        name: { type: 'string', minLength: 1 },
        facets: {
          type: 'object',
          properties: { jobType: { $ref: '#/$defs/JobTypeJobFacet' } },
          additionalProperties: { $ref: '#/$defs/BaseFacet' },
        },
      },
      required: ['namespace', 'name'],
    },
    inputs: { type: 'array', items: { $ref: '#/$defs/Dataset' } },
    outputs: { type: 'array', items: { $ref: '#/$defs/Dataset' } },
  },
  required: ['eventTime', 'run', 'job', 'producer', 'schemaURL'],
} as const;

const ajv = new Ajv2020({ allErrors: true, strict: false });
addFormats(ajv);
const validate = ajv.compile(RUN_EVENT_SCHEMA);

/** The schema violations of `event` (empty when it conforms), as `path message` lines. */
export function runEventProblems(event: unknown): string[] {
  if (validate(event)) return [];
  return (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? ''}`);
}
