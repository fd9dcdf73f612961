import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoScenario } from '../src/cli/demo-scenario.js';
import { opsScenario, runId, schemaScenario, streamScenario } from './analysis-scenarios.js';
import { NS, day, historyScenario } from './history-scenario.js';
import { backends, startApp } from './helpers/backends.js';
import type { Send } from './helpers/api.js';

/** Every event, mostly in event-time order (the history scenario has late ones). */
const IN_ORDER: Record<string, unknown>[] = [
  ...demoScenario().events,
  ...opsScenario(),
  ...schemaScenario(),
  ...streamScenario(),
  ...historyScenario(),
] as Record<string, unknown>[];

/** The same events in a seeded random arrival order. */
function shuffled<T>(items: readonly T[], seed: number): T[] {
  const result = [...items];
  let state = seed;
  const random = () => {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
    return state / 2 ** 31;
  };
  for (let i = result.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [result[i], result[j]] = [result[j]!, result[i]!];
  }
  return result;
}

const ARRIVALS = [
  { order: 'event-time order with late events', events: IN_ORDER },
  { order: 'a shuffled order', events: shuffled(IN_ORDER, 7) },
];

/** The instants asked about: before anything, inside runs, at event times exactly, between days, after all. */
const INSTANTS = [
  '2024-04-30T00:00:00.000Z',
  day(1, '01:05:00'),
  day(1, '01:10:00'),
  day(1, '02:05:00'),
  day(2, '01:05:00'),
  day(2, '12:00:00'),
  day(3, '02:15:00'),
  day(4, '01:05:00'),
  day(4, '12:00:00'),
  day(5, '02:00:00'),
  '2025-03-12T12:00:00.000Z',
  '2030-01-01T00:00:00.000Z',
];

interface Node {
  namespace: string;
  name: string;
}

describe.each(backends().flatMap((backend) => ARRIVALS.map((arrival) => ({ backend, ...arrival }))))(
  'time travel on the $backend.name store, events arriving in $order',
  ({ backend, events: EVENTS }) => {
    let main: Awaited<ReturnType<typeof startApp>>;

    const post = async (send: Send, events: readonly unknown[]) => {
      const response = await send('/api/v1/lineage/batch', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(events),
      });
      expect(await response.json()).toMatchObject({ status: 'success' });
    };
    const get = async (send: Send, path: string, query: Record<string, string> = {}) => {
      const search = new URLSearchParams(query).toString();
      const response = await send(`${path}${search ? `?${search}` : ''}`);
      const body: unknown = await response.json();
      return { status: response.status, body };
    };
    /** Datasets and jobs a server knows, by namespace. */
    const entities = async (send: Send) => {
      const { body } = await get(send, '/api/v1/namespaces');
      const datasets: Node[] = [];
      const jobs: Node[] = [];
      for (const { name } of (body as { namespaces: { name: string }[] }).namespaces) {
        const ns = encodeURIComponent(name);
        const listed = await get(send, `/api/v1/namespaces/${ns}/datasets`, { limit: '1000' });
        datasets.push(...(listed.body as { datasets: Node[] }).datasets);
        const jobList = await get(send, `/api/v1/namespaces/${ns}/jobs`, { limit: '1000' });
        jobs.push(...(jobList.body as { jobs: Node[] }).jobs);
      }
      return { datasets, jobs };
    };
    const path = (kind: 'datasets' | 'jobs', node: Node) =>
      `/api/v1/namespaces/${encodeURIComponent(node.namespace)}/${kind}/${encodeURIComponent(node.name)}`;

    beforeAll(async () => {
      main = await startApp(backend);
      await post(main.request, EVENTS);
    });
    afterAll(async () => {
      await main?.stop();
    });

    it.each(INSTANTS)(
      'answers as of %s what a store holding only the events up to then answers',
      async (instant) => {
        const at = Date.parse(instant);
        const replay = await startApp(backend);
        try {
          const past = EVENTS.filter((event) => Date.parse(event.eventTime as string) <= at);
          if (past.length > 0) await post(replay.request, past);
          const now = await entities(replay.request);
          const everything = await entities(main.request);
          const asOf = { asOf: instant };
          const questions: { path: string; query: Record<string, string> }[] = [];
          for (const dataset of now.datasets) {
            const nodeId = `dataset:${dataset.namespace}:${dataset.name}`;
            questions.push(
              { path: path('datasets', dataset), query: {} },
              { path: '/api/v1/lineage', query: { nodeId, depth: '20' } },
              { path: '/api/v1/column-lineage', query: { nodeId, depth: '20', withDownstream: 'true' } },
            );
          }
          for (const job of now.jobs) {
            const nodeId = `job:${job.namespace}:${job.name}`;
            questions.push(
              { path: path('jobs', job), query: {} },
              { path: '/api/v1/lineage', query: { nodeId, depth: '20' } },
              { path: '/api/v1/column-lineage', query: { nodeId, depth: '20' } },
            );
          }
          for (const question of questions) {
            const expected = await get(replay.request, question.path, question.query);
            const actual = await get(main.request, question.path, { ...question.query, ...asOf });
            expect({ ...question, ...actual }).toEqual({ ...question, ...expected });
          }
          // What did not exist yet is not found.
          const known = new Set(
            [...now.datasets, ...now.jobs].map((node) => `${node.namespace}:${node.name}`),
          );
          for (const [kind, nodes] of [
            ['datasets', everything.datasets],
            ['jobs', everything.jobs],
          ] as const) {
            for (const node of nodes.filter(
              (candidate) => !known.has(`${candidate.namespace}:${candidate.name}`),
            )) {
              expect({ node, status: (await get(main.request, path(kind, node), asOf)).status }).toEqual({
                node,
                status: 404,
              });
            }
          }
          expect(questions.length).toBeGreaterThan(past.length > 0 ? 10 : -1);
        } finally {
          await replay.stop();
        }
      },
      60_000,
    );

    it('compares the lineage of a node at two times', async () => {
      const { status, body } = await get(main.request, '/api/v1/analysis/graph-diff', {
        nodeId: `dataset:${NS}:rep`,
        from: day(1, '12:00:00'),
        to: day(2, '12:00:00'),
        direction: 'upstream',
      });
      expect(status).toBe(200);
      const run = (n: number, d: number) => ({
        id: runId(9, n),
        state: 'COMPLETED',
        startedAt: new Date(Date.parse(day(d, '01:00:00'))).toISOString(),
        endedAt: new Date(Date.parse(day(d, '01:10:00'))).toISOString(),
        durationMs: 600_000,
      });
      expect(body).toMatchObject({
        nodeId: `dataset:${NS}:rep`,
        nodes: { added: [`dataset:${NS}:src_b`], removed: [`dataset:${NS}:src_a`], unchanged: 4 },
        edges: {
          added: [{ origin: `dataset:${NS}:src_b`, destination: `job:${NS}:load` }],
          removed: [{ origin: `dataset:${NS}:src_a`, destination: `job:${NS}:load` }],
          unchanged: 3,
        },
        datasets: [
          {
            dataset: `dataset:${NS}:tbl`,
            schemaChange: {
              added: [{ name: 'x', type: 'text' }],
              removed: [],
              typeChanged: [{ name: 'id', fromType: 'int', toType: 'bigint' }],
              breaking: true,
            },
            rowCount: { from: 1, to: 3, change: 2 },
          },
        ],
        jobs: [{ job: `job:${NS}:load`, from: run(1, 1), to: run(3, 2), duration: { change: 0 } }],
        assertions: [],
      });
      const [changed] = (body as { datasets: { fromVersion: string; toVersion: string }[] }).datasets;
      const versions = await get(
        main.request,
        `${path('datasets', { namespace: NS, name: 'tbl' })}/versions`,
      );
      const known = (versions.body as { versions: { version: string }[] }).versions.map((v) => v.version);
      expect(known).toEqual(expect.arrayContaining([changed!.fromVersion, changed!.toVersion]));
      expect(changed!.fromVersion).not.toBe(changed!.toVersion);
    });

    it('compares with nothing before a node existed, and refuses times out of order or before it', async () => {
      const diff = (nodeId: string, from: string, to: string) =>
        get(main.request, '/api/v1/analysis/graph-diff', { nodeId, from, to });
      const load = `job:${NS}:load`;
      expect((await diff(load, '2024-01-01T00:00:00Z', day(1, '12:00:00'))).body).toMatchObject({
        nodes: {
          added: [`dataset:${NS}:rep`, `dataset:${NS}:src_a`, `dataset:${NS}:tbl`, load, `job:${NS}:report`],
          removed: [],
          unchanged: 0,
        },
      });
      expect((await diff(load, day(2, '00:00:00'), day(1, '00:00:00'))).status).toBe(400);
      expect((await diff(load, '2024-01-01T00:00:00Z', '2024-01-02T00:00:00Z')).status).toBe(404);
    });

    it('gives run diff the versions the run API shows, whatever order the events arrived in', async () => {
      const versionsOf = async (run: string) => {
        const { body } = await get(main.request, `/api/v1/jobs/runs/${run}`);
        const { inputDatasetVersions, outputDatasetVersions } = body as Record<
          'inputDatasetVersions' | 'outputDatasetVersions',
          { datasetVersionId: { version: string } }[]
        >;
        return [...inputDatasetVersions, ...outputDatasetVersions].map((v) => v.datasetVersionId.version);
      };
      // report reads tbl without describing it: the version it read is tbl's at the time, not at arrival.
      for (const [from, to] of [
        [runId(9, 2), runId(9, 5)],
        [runId(9, 1), runId(9, 6)],
      ] as const) {
        const { body } = await get(main.request, '/api/v1/analysis/run-diff', { from, to });
        const diff = body as Record<'inputs' | 'outputs', { fromVersion: string; toVersion: string }[]>;
        const sides = [...diff.inputs, ...diff.outputs];
        expect(sides.map((d) => d.fromVersion)).toEqual(await versionsOf(from));
        expect(sides.map((d) => d.toVersion)).toEqual(await versionsOf(to));
      }
    });

    it('refuses an asOf that is not a time', async () => {
      const { status, body } = await get(main.request, '/api/v1/lineage', {
        nodeId: `dataset:${NS}:tbl`,
        asOf: 'last tuesday',
      });
      expect(status).toBe(400);
      expect(JSON.stringify(body)).toContain('asOf');
    });
  },
);
