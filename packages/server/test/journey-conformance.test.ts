/**
 * Classification and the data journey over real producers' column lineage: the Spark listener's column-level
 * lineage scenario (spark-cll) and dbt's (dbt-expected), from ../shared/conformance, with field tags put on by
 * hand-written DatasetEvents.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backends, startApp, type TestServer } from './helpers/backends.js';
import { hasConformance, readEvents } from './helpers/conformance.js';

const SPARK = 'file';
const SOURCE1 = '/tmp/cll_test/cll_source1';
const TBL1 = '/tmp/cll_test/tbl1';
const DBT = 'postgres://localhost:5432';
const PRODUCER = 'https://example.com/headwater/journey-conformance-test';

const tags = (namespace: string, name: string, field: string, time: string) => ({
  eventTime: time,
  producer: PRODUCER,
  schemaURL: 'https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/DatasetEvent',
  dataset: {
    namespace,
    name,
    facets: {
      tags: {
        _producer: PRODUCER,
        _schemaURL: 'https://openlineage.io/spec/facets/1-0-0/TagsDatasetFacet.json#/$defs/TagsDatasetFacet',
        tags: [{ key: 'pii', value: 'true', field }],
      },
    },
  },
});

/** dbt's expected event is a subset: completed here with what a real one has (its time, run, producer, input). */
function dbtEvent(): unknown {
  const [partial] = readEvents('dbt-expected/column_lineage_event.json') as Record<string, unknown>[];
  return {
    ...partial,
    eventTime: '2024-08-07T10:00:00Z',
    producer: PRODUCER,
    schemaURL: 'https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent',
    run: { runId: '019127e0-0000-7000-8000-000000000001' },
    inputs: [{ namespace: DBT, name: 'dbt_test.main.raw_orders' }],
  };
}

describe.skipIf(!hasConformance()).each(backends())(
  "journeys over real producers' column lineage ($name)",
  (backend) => {
    let t: TestServer;
    const get = async <T>(path: string): Promise<T> => {
      const response = await t.request(path);
      expect(response.status, `${path}: ${await response.clone().text()}`).toBe(200);
      return (await response.json()) as T;
    };
    beforeAll(async () => {
      t = await startApp(backend);
      const events = [
        ...Array.from({ length: 9 }, (_, index) => readEvents(`spark-cll/${index + 1}.json`)).flat(),
        dbtEvent(),
        tags(SPARK, SOURCE1, 'a', '2024-08-06T13:00:00Z'),
        tags(DBT, 'dbt_test.main.raw_orders', 'status', '2024-08-07T09:00:00Z'),
      ];
      const response = await t.request('/api/v1/lineage/batch', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(events),
      });
      expect(response.status, await response.clone().text()).toBe(200);
    });
    afterAll(() => t?.stop());

    it("follows the Spark listener's column lineage: the column a feeds ident, trans and agg of tbl1", async () => {
      const journey = await get<{
        hops: { from: string; to: string; job: string; runs: { count: number } }[];
      }>(
        `/api/v1/compliance/journey?nodeId=${encodeURIComponent(`datasetField:${SPARK}:${SOURCE1}:a`)}` +
          '&from=2024-08-06T00:00:00Z&to=2024-08-07T00:00:00Z',
      );
      expect(journey.hops.map((hop) => hop.to)).toEqual(
        ['agg', 'ident', 'trans'].map((field) => `datasetField:${SPARK}:${TBL1}:${field}`),
      );
      for (const hop of journey.hops) {
        expect(hop.job).toMatch(
          /^job:testColumnLevelLineage:open_lineage_integration_create_table\.execute_create_hive/,
        );
        expect(hop.runs.count).toBe(1);
      }
      // The pii tag on cll_source1.a reaches the same columns.
      const classified = await get<{ columns: { nodeId: string }[] }>(
        '/api/v1/compliance/classified?tag=pii',
      );
      expect(classified.columns.map((column) => column.nodeId)).toEqual(
        expect.arrayContaining(
          ['agg', 'ident', 'trans'].map((field) => `datasetField:${SPARK}:${TBL1}:${field}`),
        ),
      );
    });

    it("follows dbt's column lineage: status feeds completed_amount and status, with the pii tag", async () => {
      const journey = await get<{ nodes: { nodeId: string; tags: string[] }[]; hops: { to: string }[] }>(
        `/api/v1/compliance/journey?nodeId=${encodeURIComponent(`datasetField:${DBT}:dbt_test.main.raw_orders:status`)}` +
          '&from=2024-08-07T00:00:00Z&to=2024-08-08T00:00:00Z&tags=pii',
      );
      expect(journey.hops.map((hop) => hop.to)).toEqual([
        `datasetField:${DBT}:dbt_test.main.stg_orders:completed_amount`,
        `datasetField:${DBT}:dbt_test.main.stg_orders:status`,
      ]);
      expect(journey.nodes[0]!.tags).toEqual(['pii']);
    });
  },
);
