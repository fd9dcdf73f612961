import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backends, startApp } from './helpers/backends.js';

interface GeneratedJob {
  name: string;
  inputs: string[];
  outputs: string[];
}

const NS = 'gen';
const dsId = (name: string) => `dataset:${NS}:${name}`;
const jobId = (name: string) => `job:${NS}:${name}`;

function completeRun(job: string, inputs: string[], outputs: string[], time: string) {
  return {
    eventType: 'COMPLETE',
    eventTime: time,
    producer: 'https://example.com/lineage-test',
    schemaURL: 'https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent',
    run: { runId: randomUUID() },
    job: { namespace: NS, name: job },
    inputs: inputs.map((name) => ({ namespace: NS, name })),
    outputs: outputs.map((name) => ({ namespace: NS, name })),
  };
}

/** The brute-force reference: shortest job-count paths by exhaustive relaxation over the edge list. */
function reference(jobs: GeneratedJob[], start: string, depth: number, direction: string) {
  const edges: [string, string][] = [];
  for (const job of jobs) {
    for (const input of job.inputs) edges.push([dsId(input), jobId(job.name)]);
    for (const output of job.outputs) edges.push([jobId(job.name), dsId(output)]);
  }
  const walk = (upstream: boolean) => {
    const cost = new Map<string, number>([[start, start.startsWith('job:') ? 1 : 0]]);
    if (start.startsWith('job:') && depth < 1) return new Set([start]);
    for (let changed = true; changed;) {
      changed = false;
      for (const [origin, destination] of edges) {
        const [from, to] = upstream ? [destination, origin] : [origin, destination];
        const c = cost.get(from);
        if (c === undefined) continue;
        const next = to.startsWith('job:') ? c + 1 : c;
        if (next > depth) continue;
        if ((cost.get(to) ?? Infinity) > next) {
          cost.set(to, next);
          changed = true;
        }
      }
    }
    return new Set(cost.keys());
  };
  const nodes = new Set<string>();
  if (direction !== 'downstream') for (const node of walk(true)) nodes.add(node);
  if (direction !== 'upstream') for (const node of walk(false)) nodes.add(node);
  nodes.add(start);
  const inGraph = edges.filter(([origin, destination]) => nodes.has(origin) && nodes.has(destination));
  return {
    nodes: [...nodes].sort(),
    edges: inGraph.map(([origin, destination]) => `${origin} -> ${destination}`).sort(),
  };
}

describe.each(backends())('lineage on the $name store', (backend) => {
  let ctx: Awaited<ReturnType<typeof startApp>>;
  let jobs: GeneratedJob[];

  beforeAll(async () => {
    ctx = await startApp(backend);
    // A random graph: 60 datasets, 50 jobs, each reading 0-3 and writing 1-2 datasets (cycles allowed).
    jobs = fc
      .sample(
        fc.array(
          fc.tuple(
            fc.uniqueArray(fc.nat(59), { maxLength: 3 }),
            fc.uniqueArray(fc.nat(59), { minLength: 1, maxLength: 2 }),
          ),
          {
            minLength: 50,
            maxLength: 50,
          },
        ),
        { numRuns: 1, seed: 42 },
      )[0]!
      .map(([inputs, outputs], index) => ({
        name: `job${index}`,
        inputs: inputs.map((n) => `ds${n}`),
        outputs: outputs.map((n) => `ds${n}`),
      }));
    // Every job first ran with an extra input it later stopped reading: a completed run that does not name
    // an edge retires it, so the reference graph holds only the latest run's inputs and outputs.
    const events = jobs.flatMap((job) => [
      completeRun(job.name, [...job.inputs, 'retired_input'], job.outputs, '2024-01-01T00:00:00Z'),
      completeRun(job.name, job.inputs, job.outputs, '2024-01-02T00:00:00Z'),
    ]);
    const response = await ctx.request('/api/v1/lineage/batch', {
      method: 'POST',
      body: JSON.stringify(events),
      headers: { 'content-type': 'application/json' },
    });
    expect(await response.json()).toMatchObject({ status: 'success' });
  });
  afterAll(async () => {
    await ctx?.stop();
  });

  it('answers like a brute-force reference for random starts, depths and directions', async () => {
    const starts = [...jobs.map((job) => jobId(job.name)), ...jobs.flatMap((job) => job.outputs.map(dsId))];
    const cases = fc.sample(
      fc.tuple(
        fc.constantFrom(...starts),
        fc.integer({ min: 0, max: 6 }),
        fc.constantFrom('upstream', 'downstream', 'both'),
      ),
      { numRuns: 80, seed: 7 },
    );
    let largest = 0;
    for (const [start, depth, direction] of cases) {
      const url = `/api/v1/lineage?nodeId=${encodeURIComponent(start)}&depth=${depth}&direction=${direction}`;
      const body = (await (await ctx.request(url)).json()) as {
        graph: {
          id: string;
          inEdges: { origin: string; destination: string }[];
          outEdges: { origin: string; destination: string }[];
        }[];
      };
      const edges = new Set<string>();
      for (const node of body.graph) {
        for (const edge of [...node.inEdges, ...node.outEdges])
          edges.add(`${edge.origin} -> ${edge.destination}`);
      }
      expect({
        start,
        depth,
        direction,
        nodes: body.graph.map((node) => node.id),
        edges: [...edges].sort(),
      }).toEqual({
        start,
        depth,
        direction,
        ...reference(jobs, start, depth, direction),
      });
      largest = Math.max(largest, body.graph.length);
    }
    // The sample must reach deep, branching graphs, or the comparison proves little.
    expect(largest).toBeGreaterThan(30);
  });

  it('shows edges from a START before the run completes, and hides nothing else', async () => {
    const start = {
      ...completeRun('streaming', ['ds1'], ['stream_out'], '2024-02-01T00:00:00Z'),
      eventType: 'START',
    };
    await ctx.request('/api/v1/lineage', {
      method: 'POST',
      body: JSON.stringify(start),
      headers: { 'content-type': 'application/json' },
    });
    const body = (await (
      await ctx.request(`/api/v1/lineage?nodeId=${dsId('stream_out')}&depth=1&direction=upstream`)
    ).json()) as {
      graph: { id: string }[];
    };
    expect(body.graph.map((node) => node.id)).toEqual([dsId('ds1'), dsId('stream_out'), jobId('streaming')]);
  });

  it('shows what changed since the last answer (cached node data is dropped on commit and on tagging)', async () => {
    const url = `/api/v1/lineage?nodeId=${encodeURIComponent(jobId('job0'))}&depth=1`;
    type Answer = { graph: { id: string; data: { latestRun?: { state: string }; tags?: string[] } }[] };
    const node = (answer: Answer, id: string) => answer.graph.find((candidate) => candidate.id === id)!;
    const before = (await (await ctx.request(url)).json()) as Answer;
    expect(node(before, jobId('job0')).data.latestRun?.state).toBe('COMPLETED');
    const failed = {
      ...completeRun('job0', jobs[0]!.inputs, jobs[0]!.outputs, '2024-03-01T00:00:00Z'),
      eventType: 'FAIL',
    };
    await ctx.request('/api/v1/lineage', {
      method: 'POST',
      body: JSON.stringify(failed),
      headers: { 'content-type': 'application/json' },
    });
    const after = (await (await ctx.request(url)).json()) as Answer;
    expect(node(after, jobId('job0')).data.latestRun?.state).toBe('FAILED');
    const output = jobs[0]!.outputs[0]!;
    const tagged = await ctx.request(`/api/v1/namespaces/${NS}/datasets/${output}/tags/PII`, {
      method: 'POST',
    });
    expect(tagged.status).toBe(200);
    const withTag = (await (await ctx.request(url)).json()) as Answer;
    expect(node(withTag, dsId(output)).data.tags).toContain('PII');
  });

  it('answers 400 for a bad nodeId and 404 for an unknown node', async () => {
    const bad = await ctx.request('/api/v1/lineage?nodeId=table:x');
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ error: 'INVALID_NODE_ID' });
    const unknown = await ctx.request(`/api/v1/lineage?nodeId=${dsId('nope')}`);
    expect(unknown.status).toBe(404);
    const missing = await ctx.request('/api/v1/lineage');
    expect(missing.status).toBe(400);
  });
});
