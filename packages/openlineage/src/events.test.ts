import { describe, expect, it } from 'vitest';
import {
  DATASET_EVENT_SCHEMA_URL,
  JOB_EVENT_SCHEMA_URL,
  RUN_EVENT_SCHEMA_URL,
  datasetEvent,
  eventKind,
  inputDataset,
  jobEvent,
  outputDataset,
  runEvent,
} from './events.js';
import {
  columnLineageDatasetFacet,
  dataQualityMetricsInputDatasetFacet,
  errorMessageRunFacet,
  outputStatisticsOutputDatasetFacet,
  parentRunFacet,
  schemaDatasetFacet,
  sqlJobFacet,
} from './generated/facet-builders.js';
import { DEFAULT_PRODUCER } from './producer.js';
import { officialErrors } from './test-support/official-schemas.js';
import { isUuid } from './uuid.js';

const CORE = 'https://openlineage.io/spec/2-0-2/OpenLineage.json';
const orders = { namespace: 'postgres://db:5432', name: 'shop.public.orders' };

describe('event builders', () => {
  it('fill eventTime, producer, schemaURL and a UUIDv7 run id', () => {
    const before = Date.now();
    const event = runEvent({ eventType: 'START', job: { namespace: 'etl', name: 'load' } });
    expect(event.schemaURL).toBe(`${CORE}#/$defs/RunEvent`);
    expect(RUN_EVENT_SCHEMA_URL).toBe(`${CORE}#/$defs/RunEvent`);
    expect(event.producer).toBe(DEFAULT_PRODUCER);
    expect(Date.parse(event.eventTime)).toBeGreaterThanOrEqual(before);
    expect(event.eventTime).toMatch(/Z$/);
    expect(isUuid(event.run.runId)).toBe(true);
    expect(event.run.runId[14]).toBe('7');
    expect(officialErrors(`${CORE}#/$defs/RunEvent`, event)).toEqual([]);
    expect(officialErrors(CORE, event)).toEqual([]);
  });

  it('build a full RunEvent with facets that validates against the core and every facet schema', () => {
    const runId = '0190b6a2-5c3e-7a41-9d2f-6c0e8b1f2a3d';
    const event = runEvent({
      eventType: 'FAIL',
      eventTime: new Date('2024-01-15T10:00:00Z'),
      producer: 'https://example.com/producer',
      run: {
        runId,
        facets: {
          parent: parentRunFacet({ run: { runId }, job: { namespace: 'etl', name: 'dag' } }),
          errorMessage: errorMessageRunFacet({ message: 'boom', programmingLanguage: 'JavaScript' }),
        },
      },
      job: {
        namespace: 'etl',
        name: 'dag.load',
        facets: { sql: sqlJobFacet({ query: 'insert into t select 1' }) },
      },
      inputs: [
        inputDataset({
          ...orders,
          facets: { schema: schemaDatasetFacet({ fields: [{ name: 'id', type: 'INT' }] }) },
          inputFacets: {
            dataQualityMetrics: dataQualityMetricsInputDatasetFacet({ columnMetrics: {}, rowCount: 3 }),
          },
        }),
      ],
      outputs: [
        outputDataset({
          namespace: 's3://lake',
          name: 'orders',
          facets: {
            columnLineage: columnLineageDatasetFacet({
              fields: { id: { inputFields: [{ ...orders, field: 'id' }] } },
            }),
          },
          outputFacets: { outputStatistics: outputStatisticsOutputDatasetFacet({ rowCount: 3 }) },
        }),
      ],
    });
    expect(event.eventTime).toBe('2024-01-15T10:00:00.000Z');
    expect(officialErrors(CORE, event)).toEqual([]);
    const facets = [
      [event.run.facets!.parent!, 'ParentRunFacet'],
      [event.run.facets!.errorMessage!, 'ErrorMessageRunFacet'],
      [event.job.facets!.sql!, 'SQLJobFacet'],
      [event.inputs![0]!.facets!.schema!, 'SchemaDatasetFacet'],
      [event.outputs![0]!.facets!.columnLineage!, 'ColumnLineageDatasetFacet'],
    ] as const;
    for (const [facet, def] of facets) expect(officialErrors(facet._schemaURL, facet), def).toEqual([]);
    expect(JSON.parse(JSON.stringify(event))).toEqual(event);
    expect(eventKind(event)).toBe('RunEvent');
  });

  it('build JobEvents and DatasetEvents that validate and are told apart', () => {
    const job = jobEvent({ job: { namespace: 'etl', name: 'view_refresh' }, inputs: [inputDataset(orders)] });
    expect(job.schemaURL).toBe(JOB_EVENT_SCHEMA_URL);
    expect(officialErrors(`${CORE}#/$defs/JobEvent`, job)).toEqual([]);
    expect(officialErrors(CORE, job)).toEqual([]);
    expect(eventKind(job)).toBe('JobEvent');

    const dataset = datasetEvent({
      dataset: { ...orders, facets: { schema: schemaDatasetFacet({ fields: [{ name: 'id' }] }) } },
      eventTime: '2024-01-15T10:00:00+01:00',
    });
    expect(dataset.schemaURL).toBe(DATASET_EVENT_SCHEMA_URL);
    expect(dataset.eventTime).toBe('2024-01-15T10:00:00+01:00');
    expect(officialErrors(`${CORE}#/$defs/DatasetEvent`, dataset)).toEqual([]);
    expect(officialErrors(CORE, dataset)).toEqual([]);
    expect(eventKind(dataset)).toBe('DatasetEvent');
  });

  it('do not share arrays with the caller', () => {
    const inputs = [inputDataset(orders)];
    const event = runEvent({ job: { namespace: 'n', name: 'j' }, inputs });
    inputs.push(inputDataset({ namespace: 'x', name: 'y' }));
    expect(event.inputs).toHaveLength(1);
    expect(event.eventType).toBeUndefined();
  });
});
