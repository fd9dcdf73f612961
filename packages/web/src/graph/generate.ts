import type { DatasetNode, Edge, JobNode, LineageGraphResponse } from '../api/types.js';

/**
 * A deterministic lineage graph of about `nodeCount` nodes in the server's response shape, for the benchmark
 * page and tests: layers of datasets joined by jobs that each read one to three datasets of the layer before
 * and write one dataset, with every tenth job failing. Same count and seed, same graph.
 */
export function generateLineageGraph(nodeCount: number, seed = 42): LineageGraphResponse {
  let state = seed >>> 0;
  // mulberry32: tiny, fast and good enough to vary fan-in.
  const random = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const now = new Date(Date.UTC(2025, 2, 14)).toISOString();
  const datasets: DatasetNode[] = [];
  const jobs: JobNode[] = [];
  const edges: Edge[] = [];
  const dataset = (name: string): DatasetNode => {
    const node: DatasetNode = {
      id: `dataset:bench:${name}`,
      type: 'DATASET',
      data: {
        id: { namespace: 'bench', name },
        type: 'DB_TABLE',
        name,
        physicalName: name,
        createdAt: now,
        updatedAt: now,
        namespace: 'bench',
        sourceName: 'bench',
        fields: [],
        tags: [],
        lastModifiedAt: now,
        description: null,
        lastLifecycleState: null,
      },
      inEdges: [],
      outEdges: [],
    };
    datasets.push(node);
    return node;
  };
  const layerWidth = Math.max(4, Math.round(Math.sqrt(nodeCount / 2)));
  let previous: DatasetNode[] = [];
  for (let i = 0; i < layerWidth; i++) previous.push(dataset(`source_${i}`));
  let layer = 0;
  while (datasets.length + jobs.length + 2 <= nodeCount) {
    layer++;
    const current: DatasetNode[] = [];
    for (let i = 0; i < layerWidth && datasets.length + jobs.length + 2 <= nodeCount; i++) {
      const name = `etl.layer_${layer}.job_${i}`;
      const state = jobs.length % 10 === 7 ? 'FAILED' : 'COMPLETED';
      const job: JobNode = {
        id: `job:bench:${name}`,
        type: 'JOB',
        data: {
          id: { namespace: 'bench', name },
          type: 'BATCH',
          name,
          simpleName: `job_${i}`,
          createdAt: now,
          updatedAt: now,
          namespace: 'bench',
          inputs: [],
          outputs: [],
          location: null,
          description: null,
          latestRun: {
            id: `run-${jobs.length}`,
            createdAt: now,
            updatedAt: now,
            nominalStartTime: null,
            nominalEndTime: null,
            state,
            startedAt: now,
            endedAt: now,
            durationMs: 60_000,
            args: {},
            inputDatasetVersions: [],
            outputDatasetVersions: [],
            facets: {},
            error: null,
          },
        },
        inEdges: [],
        outEdges: [],
      };
      jobs.push(job);
      const fanIn = 1 + Math.floor(random() * 3);
      for (let k = 0; k < fanIn; k++) {
        const input = previous[Math.floor(random() * previous.length)]!;
        edges.push({ origin: input.id, destination: job.id });
      }
      const output = dataset(`warehouse.layer_${layer}.table_${i}`);
      edges.push({ origin: job.id, destination: output.id });
      current.push(output);
    }
    previous = current;
  }
  const byId = new Map<string, DatasetNode | JobNode>();
  for (const node of [...datasets, ...jobs]) byId.set(node.id, node);
  const seen = new Set<string>();
  for (const edge of edges) {
    const key = `${edge.origin}->${edge.destination}`;
    if (seen.has(key)) continue;
    seen.add(key);
    byId.get(edge.origin)!.outEdges.push(edge);
    byId.get(edge.destination)!.inEdges.push(edge);
  }
  return { graph: [...datasets, ...jobs] };
}
