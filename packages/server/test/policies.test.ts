/**
 * Policies over classification (POST /api/v1/compliance/policies/check, `headwater policy check`): a tag that
 * reaches a forbidden namespace breaks `neverReaches` (masking stops it, a coarse reach breaks it unless
 * allowed); a job reading what the tag reaches without the required tag breaks `readersNeedTag`.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backends, startServer, type TestServer } from './helpers/backends.js';
import { runCommand } from './helpers/cli.js';
import { policyCommand } from '../src/cli/policy.js';

const PRODUCER = 'https://example.com/headwater/policies-test';
const PRIVATE = 's3://acme-private';
const facet = (name: string, fields: Record<string, unknown>) => ({
  _producer: PRODUCER,
  _schemaURL: `https://openlineage.io/spec/facets/1-0-0/${name}.json#/$defs/${name}`,
  ...fields,
});
const lineage = (fields: Record<string, { from: string; masking?: true }>) =>
  facet('ColumnLineageDatasetFacet', {
    fields: Object.fromEntries(
      Object.entries(fields).map(([field, { from, masking }]) => [
        field,
        {
          inputFields: [
            {
              namespace: PRIVATE,
              name: 'users',
              field: from,
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

let minute = 0;
function run(
  job: string,
  output: { namespace: string; name: string; facets?: Record<string, unknown> },
  jobFacets = {},
) {
  minute++;
  return {
    eventType: 'COMPLETE',
    eventTime: new Date(Date.UTC(2026, 4, 1, 0, minute)).toISOString(),
    producer: PRODUCER,
    schemaURL: 'https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent',
    run: { runId: randomUUID() },
    job: { namespace: 'etl', name: job, facets: jobFacets },
    inputs: [
      {
        namespace: PRIVATE,
        name: 'users',
        facets: {
          tags: facet('TagsDatasetFacet', { tags: [{ key: 'pii', value: 'true', field: 'email' }] }),
        },
      },
    ],
    outputs: [output],
  };
}

const events = [
  // Masked on its way to the public site: pii does not reach it.
  run('publish', {
    namespace: 's3://acme-public-site',
    name: 'users_public',
    facets: {
      columnLineage: lineage({ email_hash: { from: 'email', masking: true }, name: { from: 'name' } }),
    },
  }),
  // Copied as is into a public bucket; the job has a purpose (its tags facet).
  run(
    'leak',
    {
      namespace: 's3://acme-public-dump',
      name: 'export',
      facets: { columnLineage: lineage({ email: { from: 'email' } }) },
    },
    { tags: facet('TagsJobFacet', { tags: [{ key: 'purpose', value: 'analytics' }] }) },
  ),
  // No column lineage: the tag may be anywhere in the output (coarse).
  run('blob', {
    namespace: 's3://acme-public-x',
    name: 'blob',
    facets: { schema: facet('SchemaDatasetFacet', { fields: [{ name: 'payload', type: 'json' }] }) },
  }),
];

const POLICIES = `policies:
  - name: pii-not-public
    tag: pii
    neverReaches: ['s3://acme-public-*']
  - name: pii-not-public-allowing-coarse
    tag: PII
    neverReaches: ['s3://acme-public-*']
    allowCoarse: true
  - name: pii-readers-have-a-purpose
    tag: pii
    readersNeedTag: purpose
`;

interface Report {
  ok: boolean;
  violations: number;
  policies: { name: string; ok: boolean; violations: { rule: string; node: string; coarse: boolean }[] }[];
}

describe.each(backends())('policies ($name)', (backend) => {
  let t: TestServer & { url: string };
  let dir: string;
  beforeAll(async () => {
    t = await startServer(backend);
    dir = await mkdtemp(path.join(os.tmpdir(), 'headwater-policies-'));
    const response = await t.request('/api/v1/lineage/batch', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(events),
    });
    expect(response.status).toBe(200);
  });
  afterAll(async () => {
    await t?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('finds what reaches a forbidden namespace, unless masked, and the readers without the tag', async () => {
    const file = path.join(dir, 'policies.yaml');
    await writeFile(file, POLICIES);
    const { code, stdout } = await runCommand(policyCommand, ['check', '-f', file, '--json', '--url', t.url]);
    expect(code).toBe(0);
    const report = JSON.parse(stdout) as Report;
    const [notPublic, allowingCoarse, purpose] = report.policies;
    expect(notPublic!.violations.map((v) => [v.node, v.coarse])).toEqual([
      ['datasetField:s3://acme-public-dump:export:email', false],
      ['datasetField:s3://acme-public-x:blob:payload', true],
    ]);
    expect(allowingCoarse!.violations.map((v) => v.node)).toEqual([
      'datasetField:s3://acme-public-dump:export:email',
    ]);
    // publish and blob read what pii reaches without a purpose; leak has one (its tags facet).
    expect(purpose!.violations.map((v) => v.node)).toEqual(['job:etl:blob', 'job:etl:publish']);
    expect(report).toMatchObject({ ok: false, violations: 5 });
  });

  it('counts a tag put on through the API, and exits 1 with --fail-on any while a policy is broken', async () => {
    const tagged = await t.request('/api/v1/namespaces/etl/jobs/publish/tags/purpose', { method: 'POST' });
    expect(tagged.status).toBe(200);
    const file = path.join(dir, 'purpose.yaml');
    await writeFile(file, 'policies:\n  - name: purpose\n    tag: pii\n    readersNeedTag: purpose\n');
    const failing = await runCommand(policyCommand, [
      'check',
      '-f',
      file,
      '--fail-on',
      'any',
      '--url',
      t.url,
    ]);
    expect(failing.code).toBe(1);
    expect(failing.stdout).toContain('FAIL  purpose (pii): 1 violations');
    expect(failing.stdout).toMatch(/readersNeedTag\s+etl:blob/);
    await t.request('/api/v1/namespaces/etl/jobs/blob/tags/purpose', { method: 'POST' });
    const passing = await runCommand(policyCommand, [
      'check',
      '-f',
      file,
      '--fail-on',
      'any',
      '--url',
      t.url,
    ]);
    expect(passing.code, passing.stdout).toBe(0);
    expect(passing.stdout).toContain('ok    purpose (pii): 0 violations');
  });

  it('refuses a policies document of the wrong shape with 400', async () => {
    const file = path.join(dir, 'bad.yaml');
    await writeFile(file, 'policies:\n  - name: x\n    neverReaches: [a]\n');
    const refused = await runCommand(policyCommand, ['check', '-f', file, '--url', t.url]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('HTTP 400');
    expect((await runCommand(policyCommand, ['check', '--url', t.url])).code).toBe(2);
  });
});
