/**
 * GET /api/v1/analysis/declared-lineage: a pipeline pushed as JobEvents (its nodes naming it in parentJob), then
 * run: an older run of one node read a dataset it no longer declares, its latest run reads what it declares; a
 * node writes a dataset it never declared, and a later failed run of it does not count; a node that never ran;
 * a node that ran but was never declared. Then nesting: modular pipelines inside a pipeline at any depth, a node
 * pushed under two pipelines, a pipeline pushed again without a node, and parent facets that form a cycle.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DeclaredLineageResult } from '../src/analysis/declared.js';
import { declaredCommand } from '../src/cli/declared.js';
import { apiOf } from './helpers/api.js';
import { runCommand } from './helpers/cli.js';
import { backends, startServer } from './helpers/backends.js';
import { checkResponse, documentedRoutes, type DocumentedRoute } from './helpers/openapi.js';
import { MINUTE, PRODUCER, T0, at, runEvent } from './read-scenario.js';

const NS = 'kedro://shop';
const PIPELINE = 'shop.__default__';
const JOB_EVENT = 'https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/JobEvent';
const ref = (name: string) => ({ namespace: NS, name, facets: {} });
const parentJob = {
  headwater_parentJob: {
    _producer: PRODUCER,
    _schemaURL: 'https://example.com/schemas/ParentJobFacet.json',
    job: { namespace: NS, name: PIPELINE },
  },
};
const jobEvent = (name: string, inputs: string[], outputs: string[], facets: Record<string, unknown>) => ({
  eventTime: at(T0),
  producer: PRODUCER,
  schemaURL: JOB_EVENT,
  job: { namespace: NS, name, facets },
  inputs: inputs.map(ref),
  outputs: outputs.map(ref),
});
const job = (name: string) => `job:${NS}:${name}`;
const dataset = (name: string) => `dataset:${NS}:${name}`;

describe.each(backends())('declared against observed lineage on the $name store', (backend) => {
  let ctx: Awaited<ReturnType<typeof startServer>>;
  let routes: DocumentedRoute[];
  const client = apiOf(() => ctx.request);
  const pipelineRun = randomUUID();
  const oldClean = randomUUID();
  const clean = randomUUID();
  const train = randomUUID();
  const trainFailed = randomUUID();
  const extra = randomUUID();

  const declared = async (query: Record<string, string>, status = 200) => {
    const path = `/api/v1/analysis/declared-lineage?${new URLSearchParams(query).toString()}`;
    const response = await fetch(`${ctx.url}${path}`);
    const body = (await response.json()) as DeclaredLineageResult & { error?: string };
    checkResponse(routes, 'GET', path.replace(/^\/api\/v1/, ''), response.status, body);
    expect({ status: response.status, body }).toMatchObject({ status });
    return body;
  };
  const run = (
    runId: string,
    name: string,
    start: number,
    end: 'COMPLETE' | 'FAIL',
    inputs: string[],
    outputs: string[],
  ) => {
    const facets = {
      parent: {
        _producer: PRODUCER,
        _schemaURL: 'https://openlineage.io/spec/facets/1-1-0/ParentRunFacet.json',
        run: { runId: pipelineRun },
        job: { namespace: NS, name: PIPELINE },
      },
    };
    const io = { inputs: inputs.map(ref), outputs: outputs.map(ref) };
    return [
      runEvent({
        eventType: 'START',
        time: start,
        runId,
        job: name,
        namespace: NS,
        runFacets: facets,
        ...io,
      }),
      runEvent({
        eventType: end,
        time: start + MINUTE,
        runId,
        job: name,
        namespace: NS,
        runFacets: facets,
        ...io,
      }),
    ];
  };

  beforeAll(async () => {
    ctx = await startServer(backend);
    routes = await documentedRoutes(ctx.request);
    // The push: the pipeline and its three nodes.
    await client.post(
      jobEvent('clean', ['raw'], ['cleaned'], parentJob),
      jobEvent('train', ['cleaned', 'params:model'], ['model'], parentJob),
      jobEvent('report', ['model'], ['report'], parentJob),
      jobEvent(PIPELINE, [], [], {}),
    );
  });
  afterAll(async () => {
    await ctx?.stop();
  });

  it('names the pipeline as the parent of its nodes as soon as they are pushed', async () => {
    const node = await client.get<{ parentJobName?: string }>(
      `/api/v1/namespaces/${encodeURIComponent(NS)}/jobs/train`,
    );
    expect(node.parentJobName).toBe(PIPELINE);
  });

  it('before any run, reports every declared edge as not observed', async () => {
    const result = await declared({ nodeId: job(PIPELINE) });
    expect(result.jobs.map((j) => [j.job, j.declared, j.observed, j.notObserved, j.run])).toEqual([
      [job(PIPELINE), 0, 0, 0, null],
      [job('clean'), 2, 0, 2, null],
      [job('report'), 2, 0, 2, null],
      [job('train'), 3, 0, 3, null],
    ]);
    expect(result.declaredNotObserved).toHaveLength(7);
    expect(result.observedNotDeclared).toEqual([]);
  });

  it('after runs, lists what the latest completed runs did not touch, and what was never declared', async () => {
    await client.post(
      // An older completed run of clean read a dataset its declaration does not name: superseded.
      ...run(oldClean, 'clean', T0 - 30 * MINUTE, 'COMPLETE', ['legacy_raw'], ['cleaned']),
      runEvent({ eventType: 'START', time: T0 + MINUTE, runId: pipelineRun, job: PIPELINE, namespace: NS }),
      ...run(clean, 'clean', T0 + MINUTE, 'COMPLETE', ['raw'], ['cleaned']),
      // train writes a dataset it never declared, and does not read its parameters.
      ...run(train, 'train', T0 + 3 * MINUTE, 'COMPLETE', ['cleaned'], ['model', 'metrics']),
      // A node that was never pushed.
      ...run(extra, 'audit', T0 + 5 * MINUTE, 'COMPLETE', ['model'], []),
      runEvent({
        eventType: 'COMPLETE',
        time: T0 + 7 * MINUTE,
        runId: pipelineRun,
        job: PIPELINE,
        namespace: NS,
      }),
      // A later run of train failed: the latest completed run is still the one above.
      ...run(trainFailed, 'train', T0 + 10 * MINUTE, 'FAIL', [], []),
    );
    const result = await declared({ nodeId: job(PIPELINE) });
    expect(result).toEqual({
      job: job(PIPELINE),
      at: at(T0 + 11 * MINUTE),
      jobs: [
        {
          job: job(PIPELINE),
          parents: [],
          declaredAt: at(T0),
          run: { id: pipelineRun, startedAt: at(T0 + MINUTE), endedAt: at(T0 + 7 * MINUTE) },
          declared: 0,
          observed: 0,
          notObserved: 0,
          undeclared: 0,
        },
        {
          job: job('audit'),
          parents: [job(PIPELINE)],
          declaredAt: null,
          run: { id: extra, startedAt: at(T0 + 5 * MINUTE), endedAt: at(T0 + 6 * MINUTE) },
          declared: 0,
          observed: 1,
          notObserved: 0,
          undeclared: 1,
        },
        {
          job: job('clean'),
          parents: [job(PIPELINE)],
          declaredAt: at(T0),
          run: { id: clean, startedAt: at(T0 + MINUTE), endedAt: at(T0 + 2 * MINUTE) },
          declared: 2,
          observed: 2,
          notObserved: 0,
          undeclared: 0,
        },
        {
          job: job('report'),
          parents: [job(PIPELINE)],
          declaredAt: at(T0),
          run: null,
          declared: 2,
          observed: 0,
          notObserved: 2,
          undeclared: 0,
        },
        {
          job: job('train'),
          parents: [job(PIPELINE)],
          declaredAt: at(T0),
          run: { id: train, startedAt: at(T0 + 3 * MINUTE), endedAt: at(T0 + 4 * MINUTE) },
          declared: 3,
          observed: 3,
          notObserved: 1,
          undeclared: 1,
        },
      ],
      declaredNotObserved: [
        { job: job('report'), direction: 'input', dataset: dataset('model') },
        { job: job('report'), direction: 'output', dataset: dataset('report') },
        { job: job('train'), direction: 'input', dataset: dataset('params:model') },
      ],
      observedNotDeclared: [
        { job: job('audit'), direction: 'input', dataset: dataset('model') },
        { job: job('train'), direction: 'output', dataset: dataset('metrics') },
      ],
    });
  });

  it('answers for one node alone, and as of an earlier time', async () => {
    const train = await declared({ nodeId: job('train') });
    expect(train.jobs.map((j) => j.job)).toEqual([job('train')]);
    expect(train.declaredNotObserved).toEqual([
      { job: job('train'), direction: 'input', dataset: dataset('params:model') },
    ]);
    expect(train.observedNotDeclared).toEqual([
      { job: job('train'), direction: 'output', dataset: dataset('metrics') },
    ]);
    // Before the push, the older run of clean is its latest completed one, and nothing is declared.
    const before = await declared({ nodeId: job('clean'), at: at(T0 - MINUTE) });
    expect(before).toMatchObject({
      jobs: [{ job: job('clean'), declaredAt: null, run: { id: oldClean }, declared: 0, observed: 2 }],
      declaredNotObserved: [],
      observedNotDeclared: [
        { job: job('clean'), direction: 'input', dataset: dataset('legacy_raw') },
        { job: job('clean'), direction: 'output', dataset: dataset('cleaned') },
      ],
    });
  });

  it('prints the same answer from the CLI, and --fail-on any exits 1 when edges differ', async () => {
    const failing = await runCommand(declaredCommand, [job('train'), '--url', ctx.url, '--fail-on', 'any']);
    expect([failing.code, failing.stderr]).toEqual([
      1,
      'headwater declared: 2 edges differ (--fail-on any).\n',
    ]);
    const stdout = failing.stdout;
    expect(stdout).toContain(
      `Declared against observed lineage of ${job('train')} at ${at(T0 + 11 * MINUTE)}`,
    );
    expect(stdout).toMatch(/Declared, not touched by the latest completed run:\nJOB +EDGE +DATASET\n/);
    expect(stdout).toMatch(new RegExp(`\\n${NS}:train +input +${NS}:params:model\\n`));
    expect(stdout).toMatch(
      new RegExp(`Observed, never declared:\\nJOB +EDGE +DATASET\\n${NS}:train +output +${NS}:metrics\\n`),
    );
    const json = await runCommand(declaredCommand, [job('clean'), '--url', ctx.url, '--json']);
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual(await declared({ nodeId: job('clean') }));
    expect((await runCommand(declaredCommand, [job('clean'), '--fail-on', 'some'])).code).toBe(2);
  });

  it('refuses what is not a job, and a job it does not know', async () => {
    expect(await declared({ nodeId: dataset('raw') }, 400)).toMatchObject({ error: 'INVALID_NODE_ID' });
    expect(await declared({ nodeId: job('nope') }, 404)).toMatchObject({ error: 'NOT_FOUND' });
    expect(await declared({ nodeId: 'job:' }, 400)).toMatchObject({ error: 'INVALID_NODE_ID' });
  });

  describe('below the first level', () => {
    // A second project: pipeline nested -> modular pipeline dp -> dp.inner -> node dp.inner.clean, and node
    // dp.report in dp; pipeline reports pushed later with dp.report too, then again without it; ring_a and ring_b
    // name each other as parent, and a run of ring_a names a run of the pipeline.
    const NESTED = 'kedro://nested';
    const nestedJob = (name: string) => `job:${NESTED}:${name}`;
    const under = (parent: string) => ({
      headwater_parentJob: {
        _producer: PRODUCER,
        _schemaURL: 'https://example.com/schemas/ParentJobFacet.json',
        job: { namespace: NESTED, name: parent },
      },
    });
    const push = (
      time: number,
      name: string,
      parent: string | null,
      inputs: string[] = [],
      outputs: string[] = [],
    ) => ({
      ...jobEvent(name, [], [], parent === null ? {} : under(parent)),
      eventTime: at(time),
      job: { namespace: NESTED, name, facets: parent === null ? {} : under(parent) },
      inputs: inputs.map((n) => ({ namespace: NESTED, name: n, facets: {} })),
      outputs: outputs.map((n) => ({ namespace: NESTED, name: n, facets: {} })),
    });
    const nestedRun = randomUUID();
    const ringRun = randomUUID();
    const summary = (result: DeclaredLineageResult) =>
      result.jobs.map((j) => [
        j.job.slice(`job:${NESTED}:`.length),
        j.parents.map((p) => p.slice(`job:${NESTED}:`.length)),
        j.declared,
      ]);

    beforeAll(async () => {
      await client.post(
        push(T0, 'dp.inner.clean', 'nested.dp.inner', ['raw'], ['clean']),
        push(T0, 'dp.report', 'nested.dp', ['clean'], ['report']),
        push(T0, 'nested.dp.inner', 'nested.dp'),
        push(T0, 'nested.dp', 'nested'),
        push(T0, 'nested', null),
        push(T0, 'ring_b', 'ring_a', ['ring'], []),
        push(T0, 'ring_a', 'ring_b', [], ['ring']),
        // The second pipeline's push, a minute later, with the same node.
        push(T0 + MINUTE, 'dp.report', 'reports', ['clean'], ['report']),
        push(T0 + MINUTE, 'reports', null),
        runEvent({ eventType: 'START', time: T0, runId: nestedRun, job: 'nested', namespace: NESTED }),
        ...[
          ['START', T0],
          ['COMPLETE', T0 + MINUTE],
        ].map(([eventType, time]) =>
          runEvent({
            eventType: eventType as 'START',
            time: time as number,
            runId: ringRun,
            job: 'ring_a',
            namespace: NESTED,
            outputs: [{ namespace: NESTED, name: 'ring', facets: {} }],
            runFacets: {
              parent: {
                _producer: PRODUCER,
                _schemaURL: 'https://openlineage.io/spec/facets/1-1-0/ParentRunFacet.json',
                run: { runId: nestedRun },
                job: { namespace: NESTED, name: 'nested' },
              },
            },
          }),
        ),
      );
    });

    it('compares every job below a pipeline at any depth, each once, with all its parents', async () => {
      expect(summary(await declared({ nodeId: nestedJob('nested') }))).toEqual([
        ['nested', [], 0],
        ['dp.inner.clean', ['nested.dp.inner'], 2],
        ['dp.report', ['nested.dp'], 2],
        ['nested.dp', ['nested'], 0],
        ['nested.dp.inner', ['nested.dp'], 0],
        ['ring_a', ['nested', 'ring_b'], 1],
        ['ring_b', ['ring_a'], 1],
      ]);
      const result = await declared({ nodeId: nestedJob('nested') });
      expect(result.declaredNotObserved.map((e) => [e.job, e.direction, e.dataset])).toEqual([
        [nestedJob('dp.inner.clean'), 'input', `dataset:${NESTED}:raw`],
        [nestedJob('dp.inner.clean'), 'output', `dataset:${NESTED}:clean`],
        [nestedJob('dp.report'), 'input', `dataset:${NESTED}:clean`],
        [nestedJob('dp.report'), 'output', `dataset:${NESTED}:report`],
        [nestedJob('ring_b'), 'input', `dataset:${NESTED}:ring`],
      ]);
      // A modular pipeline in the middle answers for what is below it only.
      expect(summary(await declared({ nodeId: nestedJob('nested.dp') }))).toEqual([
        ['nested.dp', [], 0],
        ['dp.inner.clean', ['nested.dp.inner'], 2],
        ['dp.report', ['nested.dp'], 2],
        ['nested.dp.inner', ['nested.dp'], 0],
      ]);
    });

    it('ends on parent facets that form a cycle', async () => {
      expect(summary(await declared({ nodeId: nestedJob('ring_b') }))).toEqual([
        ['ring_b', [], 1],
        ['ring_a', ['ring_b'], 1],
      ]);
    });

    it('lists a node pushed under two pipelines under both, until a pipeline is pushed again without it', async () => {
      expect(summary(await declared({ nodeId: nestedJob('reports') }))).toEqual([
        ['reports', [], 0],
        ['dp.report', ['reports'], 2],
      ]);
      expect(summary(await declared({ nodeId: nestedJob('nested.dp') }))).toContainEqual([
        'dp.report',
        ['nested.dp'],
        2,
      ]);
      // jobs.parent_job_id, the one parent Marquez's API has room for, is the newest push's.
      const node = await client.get<{ parentJobName?: string }>(
        `/api/v1/namespaces/${encodeURIComponent(NESTED)}/jobs/dp.report`,
      );
      expect(node.parentJobName).toBe('reports');
      await client.post(push(T0 + 2 * MINUTE, 'reports', null));
      expect(summary(await declared({ nodeId: nestedJob('reports') }))).toEqual([['reports', [], 0]]);
      expect(summary(await declared({ nodeId: nestedJob('reports'), at: at(T0 + 90_000) }))).toEqual([
        ['reports', [], 0],
        ['dp.report', ['reports'], 2],
      ]);
      // The other pipeline's push still has it.
      expect(summary(await declared({ nodeId: nestedJob('nested') }))).toContainEqual([
        'dp.report',
        ['nested.dp'],
        2,
      ]);
    });
  });
});
