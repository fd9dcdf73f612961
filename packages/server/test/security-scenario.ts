/**
 * Two groups of namespaces joined by lineage, for the authorisation tests: `open-jobs` and `open://lake`, which a
 * scoped reader may see, and `zzsecret-jobs` and `zzsecret://vault`, which it may not. Every name, facet value and
 * description of the hidden side contains "zzsecret", so a leak anywhere in an answer is found by a text search.
 */
import { PRODUCER, at, T0, MINUTE } from './read-scenario.js';

export const VISIBLE_PATTERN = 'open*';
export const OPEN_JOBS = 'open-jobs';
export const OPEN_LAKE = 'open://lake';
export const SECRET_JOBS = 'zzsecret-jobs';
export const SECRET_VAULT = 'zzsecret://vault';
export const MARKER = /zzsecret/i;

export const OPEN_RUN = '0190d3a2-0000-7000-8000-0000000000a1';
export const OTHER_RUN = '0190d3a2-0000-7000-8000-0000000000a2';
export const SECRET_RUN = '0190d3a2-0000-7000-8000-0000000000b1';
export const SECRET_PARENT_RUN = '0190d3a2-0000-7000-8000-0000000000b0';

const schema = (fields: { name: string; type: string; description?: string }[]) => ({
  _producer: PRODUCER,
  _schemaURL: 'https://openlineage.io/spec/facets/1-1-1/SchemaDatasetFacet.json',
  fields,
});
const docs = (description: string) => ({
  _producer: PRODUCER,
  _schemaURL: 'https://openlineage.io/spec/facets/1-0-1/DocumentationDatasetFacet.json',
  description,
});
const runEvent = (
  eventType: string,
  time: number,
  runId: string,
  namespace: string,
  job: string,
  inputs: unknown[],
  outputs: unknown[],
  runFacets: Record<string, unknown> = {},
) => ({
  eventType,
  eventTime: at(time),
  producer: PRODUCER,
  schemaURL: 'https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent',
  run: { runId, facets: runFacets },
  job: {
    namespace,
    name: job,
    facets: {
      documentation: {
        ...docs(`${job} docs`),
        _schemaURL: 'https://openlineage.io/spec/facets/1-0-1/DocumentationJobFacet.json',
      },
    },
  },
  inputs,
  outputs,
});

const secretAccounts = {
  namespace: SECRET_VAULT,
  name: 'zzsecret_db.accounts',
  facets: {
    schema: schema([{ name: 'zzsecret_iban', type: 'VARCHAR', description: 'zzsecret account number' }]),
    documentation: docs('zzsecret accounts of the vendor'),
  },
};
const openReport = {
  namespace: OPEN_LAKE,
  name: 'reports.daily',
  facets: {
    schema: schema([{ name: 'total', type: 'DECIMAL' }]),
    columnLineage: {
      _producer: PRODUCER,
      _schemaURL: 'https://openlineage.io/spec/facets/1-2-0/ColumnLineageDatasetFacet.json',
      fields: {
        total: {
          inputFields: [
            {
              namespace: SECRET_VAULT,
              name: 'zzsecret_db.accounts',
              field: 'zzsecret_iban',
              transformations: [
                { type: 'INDIRECT', subtype: 'AGGREGATION', description: '', masking: false },
              ],
            },
          ],
        },
      },
    },
  },
};
const secretExport = {
  namespace: SECRET_VAULT,
  name: 'zzsecret_db.export',
  facets: { schema: schema([{ name: 'zzsecret_total', type: 'DECIMAL' }]) },
};

const parent = {
  _producer: PRODUCER,
  _schemaURL: 'https://openlineage.io/spec/facets/1-1-0/ParentRunFacet.json',
  run: { runId: SECRET_PARENT_RUN },
  job: { namespace: SECRET_JOBS, name: 'zzsecret_parent' },
};
const error = {
  _producer: PRODUCER,
  _schemaURL: 'https://openlineage.io/spec/facets/1-0-1/ErrorMessageRunFacet.json',
  message: 'zzsecret vendor API refused',
  programmingLanguage: 'python',
};

/** The events, in eventTime order. */
export function securityEvents(): Record<string, unknown>[] {
  return [
    runEvent('START', T0, OPEN_RUN, OPEN_JOBS, 'load_report', [secretAccounts], [openReport], { parent }),
    runEvent('COMPLETE', T0 + MINUTE, OPEN_RUN, OPEN_JOBS, 'load_report', [secretAccounts], [openReport], {
      parent,
    }),
    runEvent(
      'COMPLETE',
      T0 + 2 * MINUTE,
      OTHER_RUN,
      OPEN_JOBS,
      'read_report',
      [{ namespace: OPEN_LAKE, name: 'reports.daily' }],
      [
        {
          namespace: OPEN_LAKE,
          name: 'reports.summary',
          facets: { schema: schema([{ name: 'total', type: 'DECIMAL' }]) },
        },
      ],
    ),
    runEvent(
      'START',
      T0 + 3 * MINUTE,
      SECRET_RUN,
      SECRET_JOBS,
      'zzsecret_export',
      [{ namespace: OPEN_LAKE, name: 'reports.daily' }],
      [secretExport],
    ),
    runEvent(
      'FAIL',
      T0 + 4 * MINUTE,
      SECRET_RUN,
      SECRET_JOBS,
      'zzsecret_export',
      [{ namespace: OPEN_LAKE, name: 'reports.daily' }],
      [secretExport],
      {
        errorMessage: error,
      },
    ),
    {
      eventTime: at(T0 + 5 * MINUTE),
      producer: PRODUCER,
      schemaURL: 'https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/DatasetEvent',
      dataset: { ...secretExport, facets: { documentation: docs('zzsecret export for the vendor') } },
    },
    {
      eventTime: at(T0 + 6 * MINUTE),
      producer: PRODUCER,
      schemaURL: 'https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/JobEvent',
      job: { namespace: SECRET_JOBS, name: 'zzsecret_declared', facets: {} },
      inputs: [],
      outputs: [],
    },
  ];
}
