/**
 * Classification that follows lineage (GET /api/v1/compliance/classified): a tag put on a field by a tags facet
 * or through the API spreads along DIRECT and INDIRECT column lineage, stops at a masking transformation, and
 * falls back to the whole output, flagged coarse, where a job has no column lineage.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiOf } from './helpers/api.js';
import { backends, startServer, type TestServer } from './helpers/backends.js';
import { runCommand } from './helpers/cli.js';
import { classifiedCommand } from '../src/cli/classified.js';
import { documentedRoutes, type DocumentedRoute } from './helpers/openapi.js';

const NS = 'warehouse';
const PRODUCER = 'https://example.com/headwater/classification-test';
const facet = (name: string, fields: Record<string, unknown>) => ({
  _producer: PRODUCER,
  _schemaURL: `https://openlineage.io/spec/facets/1-0-0/${name}.json#/$defs/${name}`,
  ...fields,
});
const schema = (...names: string[]) =>
  facet('SchemaDatasetFacet', { fields: names.map((name) => ({ name, type: 'string' })) });

type Input = readonly [
  dataset: string,
  field: string,
  type: 'DIRECT' | 'INDIRECT',
  subtype: string,
  masking?: true,
];
const lineage = (fields: Record<string, readonly Input[]>) =>
  facet('ColumnLineageDatasetFacet', {
    fields: Object.fromEntries(
      Object.entries(fields).map(([field, inputs]) => [
        field,
        {
          inputFields: inputs.map(([name, inputField, type, subtype, masking]) => ({
            namespace: NS,
            name,
            field: inputField,
            transformations: [{ type, subtype, ...(masking ? { masking } : {}) }],
          })),
        },
      ]),
    ),
  });

let n = 0;
/** One completed run of `job`, reading `inputs` and writing `output` with these facets. */
function run(
  job: string,
  inputs: readonly string[],
  output: string,
  facets: Record<string, unknown>,
): unknown {
  n++;
  return {
    eventType: 'COMPLETE',
    eventTime: `2025-06-01T00:${String(n).padStart(2, '0')}:00Z`,
    producer: PRODUCER,
    schemaURL: 'https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent',
    run: { runId: `00000000-0000-4000-8000-${String(n).padStart(12, '0')}` },
    job: { namespace: NS, name: job },
    inputs: inputs.map((name) => ({ namespace: NS, name })),
    outputs: [{ namespace: NS, name: output, facets }],
  };
}

const column = (dataset: string, field: string) => `datasetField:${NS}:${dataset}:${field}`;

interface Classified {
  tag: string;
  seeds: { nodeId: string; source: string }[];
  columns: {
    nodeId: string;
    distance: number;
    coarse: boolean;
    seed: string;
    via: string | null;
    jobs: string[];
  }[];
  datasets: { nodeId: string; distance: number; coarse: boolean; columns: number }[];
  stopped: { from: string; to: string; jobs: string[]; reason: string }[];
}

describe.each(backends())('classification ($name)', (backend) => {
  let server: TestServer & { url: string };
  let routes: DocumentedRoute[];
  const api = apiOf(
    () => server.request,
    () => routes,
  );

  beforeAll(async () => {
    n = 0;
    // Over a socket, for the CLI.
    server = await startServer(backend);
    routes = await documentedRoutes(server.request);
    await api.post(
      run('ingest.users', [], 'raw.users', {
        schema: schema('id', 'email', 'name', 'country'),
        tags: facet('TagsDatasetFacet', {
          tags: [
            { key: 'pii', value: 'true', field: 'email', source: 'USER' },
            { key: 'PII', value: 'true', field: 'name' },
            { key: 'pii', value: 'false', field: 'country' },
          ],
        }),
      }),
      run('build.staging', ['raw.users'], 'staging.users', {
        schema: schema('id', 'email_hash', 'name', 'is_active', 'country'),
        columnLineage: lineage({
          id: [['raw.users', 'id', 'DIRECT', 'IDENTITY']],
          email_hash: [['raw.users', 'email', 'DIRECT', 'TRANSFORMATION', true]],
          name: [['raw.users', 'name', 'DIRECT', 'IDENTITY']],
          is_active: [['raw.users', 'email', 'INDIRECT', 'FILTER']],
          country: [['raw.users', 'country', 'DIRECT', 'IDENTITY']],
        }),
      }),
      run('build.marts', ['staging.users'], 'marts.users', {
        schema: schema('uid', 'display', 'hashed'),
        columnLineage: lineage({
          uid: [['staging.users', 'id', 'DIRECT', 'IDENTITY']],
          display: [['staging.users', 'name', 'DIRECT', 'TRANSFORMATION']],
          hashed: [['staging.users', 'email_hash', 'DIRECT', 'IDENTITY']],
        }),
      }),
      // No column lineage: the export may hold anything of raw.users.
      run('export.users', ['raw.users'], 'export.users_csv', { schema: schema('a', 'b') }),
      run('report.users', ['export.users_csv'], 'report.summary', {}),
    );
    // A second tag, put on a field through the API.
    const tagged = await server.request(
      `/api/v1/namespaces/${NS}/datasets/raw.users/fields/id/tags/restricted`,
      {
        method: 'POST',
      },
    );
    expect(tagged.status).toBe(200);
  });

  afterAll(() => server?.stop());

  it('spreads a facet tag along DIRECT and INDIRECT lineage, stops at masking, and flags what a job without column lineage writes as coarse', async () => {
    const answer = await api.get<Classified>('/api/v1/compliance/classified?tag=pii');
    expect(answer.seeds).toEqual([
      { nodeId: column('raw.users', 'email'), source: 'facet', since: '2025-06-01T00:01:00.000Z' },
      { nodeId: column('raw.users', 'name'), source: 'facet', since: '2025-06-01T00:01:00.000Z' },
    ]);
    expect(answer.columns.map((c) => [c.nodeId, c.distance, c.coarse, c.via])).toEqual([
      [column('raw.users', 'email'), 0, false, null],
      [column('raw.users', 'name'), 0, false, null],
      [column('export.users_csv', 'a'), 1, true, `dataset:${NS}:raw.users`],
      [column('export.users_csv', 'b'), 1, true, `dataset:${NS}:raw.users`],
      [column('staging.users', 'is_active'), 1, false, column('raw.users', 'email')],
      [column('staging.users', 'name'), 1, false, column('raw.users', 'name')],
      [column('marts.users', 'display'), 2, false, column('staging.users', 'name')],
    ]);
    expect(answer.columns.find((c) => c.nodeId === column('marts.users', 'display'))).toMatchObject({
      seed: column('raw.users', 'name'),
      jobs: [`job:${NS}:build.marts`],
    });
    // The hash, and what is built from it, stay out.
    expect(answer.stopped).toEqual([
      {
        from: column('raw.users', 'email'),
        to: column('staging.users', 'email_hash'),
        jobs: [`job:${NS}:build.staging`],
        reason: 'masked',
        transformations: [{ type: 'DIRECT', subtype: 'TRANSFORMATION', description: null, masking: true }],
      },
    ]);
    expect(answer.datasets.map((d) => [d.nodeId, d.distance, d.coarse, d.columns])).toEqual([
      [`dataset:${NS}:raw.users`, 0, false, 2],
      [`dataset:${NS}:export.users_csv`, 1, true, 2],
      [`dataset:${NS}:staging.users`, 1, false, 2],
      [`dataset:${NS}:marts.users`, 2, false, 1],
      [`dataset:${NS}:report.summary`, 2, true, 0],
    ]);
  });

  it('starts from tags put on through the API, and answers an unknown tag with nothing', async () => {
    const answer = await api.get<Classified>('/api/v1/compliance/classified?tag=restricted');
    expect(answer.seeds).toMatchObject([{ nodeId: column('raw.users', 'id'), source: 'api' }]);
    expect(answer.columns.map((c) => [c.nodeId, c.coarse])).toEqual([
      [column('raw.users', 'id'), false],
      [column('export.users_csv', 'a'), true],
      [column('export.users_csv', 'b'), true],
      [column('staging.users', 'id'), false],
      [column('marts.users', 'uid'), false],
    ]);
    expect(await api.get<Classified>('/api/v1/compliance/classified?tag=nothing-has-it')).toEqual({
      tag: 'nothing-has-it',
      seeds: [],
      columns: [],
      datasets: [],
      stopped: [],
    });
    expect(await api.status('/api/v1/compliance/classified')).toBe(400);
  });

  it('`headwater classified TAG` lists the columns, the masked edges, and gates CI on coarse reach', async () => {
    const shown = await runCommand(classifiedCommand, ['pii', '--url', server.url]);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain('warehouse:staging.users:is_active');
    expect(shown.stdout).toMatch(
      /warehouse:export\.users_csv:a\s+coarse\s+warehouse:raw\.users\s+warehouse:export\.users/,
    );
    expect(shown.stdout).toContain(
      'Stopped: warehouse:raw.users:email -> warehouse:staging.users:email_hash (masked by warehouse:build.staging)',
    );
    expect(shown.stdout).toContain('pii reaches 7 columns in 5 datasets (2 coarse) from 2 seeds.');
    const gated = await runCommand(classifiedCommand, ['pii', '--fail-on', 'coarse', '--url', server.url]);
    expect([gated.code, gated.stderr]).toEqual([1, expect.stringContaining('--fail-on coarse')]);
    const none = await runCommand(classifiedCommand, [
      'nothing-has-it',
      '--fail-on',
      'any',
      '--url',
      server.url,
    ]);
    expect([none.code, none.stdout]).toEqual([0, 'Nothing carries the tag nothing-has-it.\n']);
    expect((await runCommand(classifiedCommand, ['pii', '--fail-on', 'all', '--url', server.url])).code).toBe(
      2,
    );
  });
});
