/**
 * The data journey (GET /api/v1/compliance/journey): hops proven by the runs of a window, with their evidence,
 * owners over the window, jurisdictions and transfers, masking on column hops, a stable hash, and a property
 * test against a brute-force walk over a replay of the events in the window.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backends, startApp, startServer, type TestServer } from './helpers/backends.js';
import { runCommand } from './helpers/cli.js';
import { journeyCommand } from '../src/cli/journey.js';
import { random } from './helpers/random.js';
import { createServer } from '../src/servers/server.js';

const PRODUCER = 'https://example.com/headwater/journey-test';
const EU_RAW = 's3://acme-eu-raw';
const EU_DB = 'postgres://eu-db:5432';
const US = 's3://acme-us-exports';
const facet = (name: string, fields: Record<string, unknown>) => ({
  _producer: PRODUCER,
  _schemaURL: `https://openlineage.io/spec/facets/1-0-0/${name}.json#/$defs/${name}`,
  ...fields,
});
const at = (day: number, hour = 0) => new Date(Date.UTC(2026, 2, day, hour)).toISOString();

interface Dataset {
  namespace: string;
  name: string;
  facets?: Record<string, unknown>;
}
function event(
  type: 'START' | 'COMPLETE',
  time: string,
  runId: string,
  job: [string, string],
  inputs: Dataset[],
  outputs: Dataset[],
): unknown {
  return {
    eventType: type,
    eventTime: time,
    producer: PRODUCER,
    schemaURL: 'https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent',
    run: { runId },
    job: { namespace: job[0], name: job[1] },
    inputs,
    outputs,
  };
}
const lineage = (fields: Record<string, [string, string, string, boolean?]>) =>
  facet('ColumnLineageDatasetFacet', {
    fields: Object.fromEntries(
      Object.entries(fields).map(([field, [namespace, name, input, masking]]) => [
        field,
        {
          inputFields: [
            {
              namespace,
              name,
              field: input,
              transformations: [
                {
                  type: 'DIRECT',
                  subtype: masking ? 'TRANSFORMATION' : 'IDENTITY',
                  ...(masking ? { masking } : {}),
                },
              ],
            },
          ],
        },
      ]),
    ),
  });
const owners = (name: string) => facet('OwnershipDatasetFacet', { owners: [{ name, type: 'MAINTAINER' }] });

/** raw (EU) -> clean -> warehouse (EU) -> export -> exports (US), with a run before the window. */
const CLEAN_RUNS = [randomUUID(), randomUUID()];
const EXPORT_RUN = randomUUID();
const scenario = [
  // Before the window: read raw, wrote an old table.
  event(
    'COMPLETE',
    at(1),
    randomUUID(),
    ['etl', 'legacy'],
    [{ namespace: EU_RAW, name: 'customers' }],
    [{ namespace: EU_DB, name: 'legacy.customers' }],
  ),
  ...CLEAN_RUNS.flatMap((runId, index) => [
    event('START', at(10 + index), runId, ['etl', 'clean'], [{ namespace: EU_RAW, name: 'customers' }], []),
    event(
      'COMPLETE',
      at(10 + index, 1),
      runId,
      ['etl', 'clean'],
      [
        {
          namespace: EU_RAW,
          name: 'customers',
          facets: {
            tags: facet('TagsDatasetFacet', { tags: [{ key: 'pii', value: 'true', field: 'email' }] }),
          },
        },
      ],
      [
        {
          namespace: EU_DB,
          name: 'warehouse.customers',
          facets: {
            columnLineage: lineage({
              email: [EU_RAW, 'customers', 'email'],
              name: [EU_RAW, 'customers', 'name'],
            }),
            // The owner changes between the two runs.
            ownership: owners(index === 0 ? 'team:crm' : 'team:privacy'),
          },
        },
      ],
    ),
  ]),
  event(
    'COMPLETE',
    at(13),
    EXPORT_RUN,
    ['export', 'us_partner'],
    [{ namespace: EU_DB, name: 'warehouse.customers' }],
    [
      {
        namespace: US,
        name: 'customers_masked',
        facets: {
          columnLineage: lineage({ email_hash: [EU_DB, 'warehouse.customers', 'email', true] }),
          lifecycleStateChange: facet('LifecycleStateChangeDatasetFacet', {
            lifecycleStateChange: 'OVERWRITE',
          }),
        },
      },
    ],
  ),
];

interface Journey {
  start: string;
  nodes: {
    nodeId: string;
    distance: number;
    jurisdiction: string | null;
    owners: { from: string; owners: { name: string }[] }[];
    tags: string[];
    retention: { facet: string }[];
  }[];
  hops: {
    from: string;
    to: string;
    job: string;
    distance: number;
    masked: boolean;
    transfer: boolean;
    transformations: { masking: boolean }[];
    runs: {
      count: number;
      first: string;
      last: string;
      samples: { runId: string; readEventId: number | null; writeEventId: number | null }[];
    };
  }[];
  transfers: number;
  sha256: string;
}

const JURISDICTIONS = ['s3://acme-eu-*=EU', 'postgres://eu-*=EU', 's3://acme-us-*=US'];

describe.each(backends())('the data journey ($name)', (backend) => {
  let t: TestServer & { url?: string };
  const get = async <T>(query: Record<string, string | string[]>): Promise<{ status: number; body: T }> => {
    const params = new URLSearchParams();
    for (const [key, value] of Object.entries(query))
      for (const one of Array.isArray(value) ? value : [value]) params.append(key, one);
    const response = await t.request(`/api/v1/compliance/journey?${params.toString()}`);
    return { status: response.status, body: (await response.json()) as T };
  };
  const window = { from: at(5), to: at(20) };

  beforeAll(async () => {
    t = await startServer(backend);
    const response = await t.request('/api/v1/lineage/batch', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(scenario),
    });
    expect(response.status).toBe(200);
  });
  afterAll(() => t?.stop());

  it('follows the runs of the window, with their evidence, owners, jurisdictions and transfers', async () => {
    const { status, body } = await get<Journey>({
      nodeId: `dataset:${EU_RAW}:customers`,
      ...window,
      tags: 'pii',
      jurisdiction: JURISDICTIONS,
    });
    expect(status).toBe(200);
    expect(body.nodes.map((node) => [node.nodeId, node.distance, node.jurisdiction])).toEqual([
      [`dataset:${EU_RAW}:customers`, 0, 'EU'],
      [`dataset:${EU_DB}:warehouse.customers`, 1, 'EU'],
      [`dataset:${US}:customers_masked`, 2, 'US'],
    ]);
    // The legacy run is before the window: legacy.customers is not on the journey.
    const [clean, exported] = body.hops;
    expect(body.hops).toHaveLength(2);
    expect(clean).toMatchObject({ job: 'job:etl:clean', distance: 1, transfer: false });
    expect(clean!.runs).toMatchObject({ count: 2, first: at(10), last: at(11, 1) });
    expect(clean!.runs.samples.map((sample) => sample.runId).sort()).toEqual([...CLEAN_RUNS].sort());
    expect(exported).toMatchObject({ job: 'job:export:us_partner', distance: 2, transfer: true });
    expect(body.transfers).toBe(1);
    // The event ids are the stored events that read and wrote.
    const ids = clean!.runs.samples.flatMap((sample) => [sample.readEventId, sample.writeEventId]);
    const rows = await t.server.db.query<{ id: number; type: string; run: string }>(
      'SELECT id, event_type AS type, run_uuid::text AS run FROM events WHERE id = ANY($1::bigint[]) ORDER BY id',
      [ids],
    );
    expect(rows.map((row) => row.type).sort()).toEqual(['COMPLETE', 'COMPLETE', 'START', 'START']);
    expect(new Set(rows.map((row) => row.run))).toEqual(new Set(CLEAN_RUNS));
    // An owner change mid-window: two periods.
    const warehouse = body.nodes[1]!;
    expect(warehouse.owners.map((period) => [period.from, period.owners.map((owner) => owner.name)])).toEqual(
      [
        [at(5), []],
        [at(10, 1), ['team:crm']],
        [at(11, 1), ['team:privacy']],
      ],
    );
    expect(body.nodes[0]!.tags).toEqual(['pii']);
    expect(body.nodes[2]!.retention.map((item) => item.facet)).toEqual(['lifecycleStateChange']);
  });

  it('follows a column, and says which hop masks it', async () => {
    const { body } = await get<Journey>({ nodeId: `datasetField:${EU_RAW}:customers:email`, ...window });
    expect(body.hops.map((hop) => [hop.from, hop.to, hop.masked])).toEqual([
      [`datasetField:${EU_RAW}:customers:email`, `datasetField:${EU_DB}:warehouse.customers:email`, false],
      [
        `datasetField:${EU_DB}:warehouse.customers:email`,
        `datasetField:${US}:customers_masked:email_hash`,
        true,
      ],
    ]);
    // `name` goes to the warehouse but not beyond: it is not on email's journey.
    expect(body.nodes.map((node) => node.nodeId)).not.toContain(
      `datasetField:${EU_DB}:warehouse.customers:name`,
    );
  });

  it('goes upstream, and a window that ends before a run leaves its hop out', async () => {
    const { body } = await get<Journey>({
      nodeId: `dataset:${US}:customers_masked`,
      direction: 'upstream',
      ...window,
    });
    expect(body.hops.map((hop) => [hop.from, hop.to, hop.distance])).toEqual([
      [`dataset:${EU_DB}:warehouse.customers`, `dataset:${US}:customers_masked`, 1],
      [`dataset:${EU_RAW}:customers`, `dataset:${EU_DB}:warehouse.customers`, 2],
    ]);
    const early = await get<Journey>({ nodeId: `dataset:${EU_RAW}:customers`, from: at(5), to: at(12) });
    expect(early.body.hops.map((hop) => hop.job)).toEqual(['job:etl:clean']);
  });

  it('answers markdown, CSV and printable HTML, each with the hash', async () => {
    const query = `nodeId=${encodeURIComponent(`dataset:${EU_RAW}:customers`)}&from=${window.from}&to=${window.to}`;
    const json = (await (await t.request(`/api/v1/compliance/journey?${query}`)).json()) as Journey;
    for (const [format, type] of [
      ['markdown', 'text/markdown'],
      ['csv', 'text/csv'],
      ['html', 'text/html'],
    ] as const) {
      const response = await t.request(`/api/v1/compliance/journey?${query}&format=${format}`);
      expect(response.headers.get('content-type')).toContain(type);
      const text = await response.text();
      expect(text, format).toContain(json.sha256);
      expect(text, format).toContain('job:export:us_partner');
    }
  });
  it('headwater journey prints the report in each format', async () => {
    const args = [`dataset:${EU_RAW}:customers`, '--from', window.from, '--to', window.to, '--url', t.url!];
    const markdown = await runCommand(journeyCommand, [
      ...args,
      '--jurisdiction',
      's3://acme-us-*=US',
      '--jurisdiction',
      's3://acme-eu-*=EU',
      '--jurisdiction',
      'postgres://eu-*=EU',
    ]);
    expect(markdown.code, markdown.stderr).toBe(0);
    expect(markdown.stdout).toContain(`### Data journey of \`dataset:${EU_RAW}:customers\``);
    expect(markdown.stdout).toContain('2 nodes reached by 2 hops; 1 between jurisdictions');
    const csv = await runCommand(journeyCommand, [...args, '--format', 'csv']);
    expect(csv.stdout.split('\n')[0]).toMatch(/^distance,from,to,job,/);
    expect(csv.stdout.trim().split('\n')).toHaveLength(4);
    const json = await runCommand(journeyCommand, [...args, '--json']);
    expect((JSON.parse(json.stdout) as Journey).hops).toHaveLength(2);
    expect((await runCommand(journeyCommand, [...args, '--format', 'pdf'])).code).toBe(2);
  });

  it('gives the same hash for the same store, also after a restart, and a different one for another window', async () => {
    const query = {
      nodeId: `dataset:${EU_RAW}:customers`,
      ...window,
      tags: 'pii',
      jurisdiction: JURISDICTIONS,
    };
    const first = (await get<Journey>(query)).body;
    expect(first.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect((await get<Journey>(query)).body.sha256).toBe(first.sha256);
    expect((await get<Journey>({ ...query, to: at(12) })).body.sha256).not.toBe(first.sha256);
    // Restarted: this server closes, another opens the same store.
    await t.server.close();
    const again = await createServer(t.config);
    try {
      await again.columnGraph.load(again.db);
      const params = new URLSearchParams();
      for (const [key, value] of Object.entries(query))
        for (const one of Array.isArray(value) ? value : [value]) params.append(key, one);
      const answer = await again.app.inject({ url: `/api/v1/compliance/journey?${params.toString()}` });
      expect(answer.json<Journey>().sha256).toBe(first.sha256);
    } finally {
      await again.close();
    }
  });
});

describe.each(backends())(
  'the journey against a brute-force walk over the replayed events ($name)',
  (backend) => {
    let t: TestServer;
    const next = random(7);
    const pick = <T>(items: readonly T[]) => items[Math.floor(next() * items.length)]!;
    const datasets = Array.from({ length: 10 }, (_, index) => `d${index}`);
    const jobs = Array.from({ length: 6 }, (_, index) => `j${index}`);
    interface Run {
      job: string;
      runId: string;
      start: number;
      end: number;
      inputs: string[];
      outputs: string[];
    }
    const runs: Run[] = Array.from({ length: 60 }, () => {
      const start = Math.floor(next() * 1000);
      return {
        job: pick(jobs),
        runId: randomUUID(),
        start,
        end: start + 1 + Math.floor(next() * 30),
        inputs: [...new Set([pick(datasets), pick(datasets)])],
        outputs: [pick(datasets)],
      };
    });
    const time = (minute: number) => new Date(Date.UTC(2026, 3, 1) + minute * 60_000).toISOString();

    beforeAll(async () => {
      t = await startApp(backend);
      const events = runs.flatMap((run) => [
        event(
          'START',
          time(run.start),
          run.runId,
          ['ns', run.job],
          run.inputs.map((name) => ({ namespace: 'w', name })),
          [],
        ),
        event(
          'COMPLETE',
          time(run.end),
          run.runId,
          ['ns', run.job],
          [],
          run.outputs.map((name) => ({ namespace: 'w', name })),
        ),
      ]);
      const response = await t.request('/api/v1/lineage/batch', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(events),
      });
      expect(response.status).toBe(200);
    });
    afterAll(() => t?.stop());

    /** Hops (from -> to by job) with their run counts, walked from `start` over the events inside [from, to]. */
    const bruteForce = (
      start: string,
      from: number,
      to: number,
      direction: 'downstream' | 'upstream',
      depth: number,
    ) => {
      const edges: { source: string; target: string; job: string; runId: string }[] = [];
      for (const run of runs) {
        const reads = run.start >= from && run.start <= to ? run.inputs : [];
        const writes = run.end >= from && run.end <= to ? run.outputs : [];
        for (const source of reads)
          for (const target of writes)
            if (source !== target) edges.push({ source, target, job: run.job, runId: run.runId });
      }
      const distance = new Map([[start, 0]]);
      const hops = new Map<string, Set<string>>();
      let frontier = [start];
      for (let d = 1; d <= depth && frontier.length > 0; d++) {
        const nextFrontier: string[] = [];
        for (const edge of edges) {
          const [near, far] =
            direction === 'downstream' ? [edge.source, edge.target] : [edge.target, edge.source];
          if (!frontier.includes(near)) continue;
          if (!distance.has(far)) {
            distance.set(far, d);
            nextFrontier.push(far);
          }
          const key = `${edge.source}>${edge.target}>${edge.job}`;
          if (!hops.has(key)) hops.set(key, new Set());
          hops.get(key)!.add(edge.runId);
        }
        frontier = [...new Set(nextFrontier)];
      }
      return Object.fromEntries([...hops].map(([key, ids]) => [key, ids.size]));
    };

    it('holds exactly the hops and runs the walk finds, for random windows, starts and directions', async () => {
      for (let trial = 0; trial < 12; trial++) {
        const from = Math.floor(next() * 600);
        const to = from + Math.floor(next() * 500);
        const start = pick(datasets);
        const direction = next() < 0.5 ? 'downstream' : 'upstream';
        const depth = 1 + Math.floor(next() * 4);
        const response = await t.request(
          `/api/v1/compliance/journey?nodeId=dataset:w:${start}&from=${time(from)}&to=${time(to)}&direction=${direction}&depth=${depth}`,
        );
        expect(response.status).toBe(200);
        const body = (await response.json()) as Journey;
        const found = Object.fromEntries(
          body.hops.map((hop) => [
            `${hop.from.slice('dataset:w:'.length)}>${hop.to.slice('dataset:w:'.length)}>${hop.job.slice('job:ns:'.length)}`,
            hop.runs.count,
          ]),
        );
        expect(found, `trial ${trial}: ${start} ${direction} depth ${depth} [${from}, ${to}]`).toEqual(
          bruteForce(start, from, to, direction, depth),
        );
      }
    });
  },
);
