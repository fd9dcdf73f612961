import type { Ms } from '../store/model-state.js';
import type { GraphNode, LineageGraph, Subgraph } from './lineage-graph.js';

/**
 * Marquez's lineage graph (GET /api/v1/lineage without `direction`): the connected component around `start`
 * within `depth` job hops, whatever the direction of each edge. A job reached brings every dataset it reads or
 * writes, and a dataset reached brings every job that reads or writes it: the other inputs of each job and the
 * jobs sharing a dataset (a failed sibling input, often the actual cause) are in, as the Marquez UI's "Full
 * Graph" expects. Depth counts jobs from the start, as {@link LineageGraph.traverse} does.
 */
export function connectedComponent(graph: LineageGraph, start: GraphNode, depth: number, at?: Ms): Subgraph {
  const datasets = new Set<number>();
  const jobs = new Set<number>();
  let frontierDatasets: number[] = [];
  let frontierJobs: number[] = [];
  let count: number;
  if (start.kind === 'dataset') {
    datasets.add(start.id);
    frontierDatasets = [start.id];
    count = 0;
  } else {
    jobs.add(start.id);
    frontierJobs = [start.id];
    count = depth < 1 ? Infinity : 1;
  }
  // Levels are expanded in order, so each node is first reached at its smallest job count and visited once.
  while (count <= depth) {
    if (frontierJobs.length > 0) {
      frontierDatasets = [];
      for (const jobId of frontierJobs) {
        for (const datasetId of [...graph.datasetsOf(jobId, 0, at), ...graph.datasetsOf(jobId, 1, at)]) {
          if (datasets.has(datasetId)) continue;
          datasets.add(datasetId);
          frontierDatasets.push(datasetId);
        }
      }
    }
    if (count >= depth || frontierDatasets.length === 0) break;
    count++;
    frontierJobs = [];
    for (const datasetId of frontierDatasets) {
      for (const jobId of [...graph.jobsOf(datasetId, 0, at), ...graph.jobsOf(datasetId, 1, at)]) {
        if (jobs.has(jobId)) continue;
        jobs.add(jobId);
        frontierJobs.push(jobId);
      }
    }
    if (frontierJobs.length === 0) break;
  }
  return { datasets, jobs, edges: graph.edgesAmong(datasets, jobs, at) };
}
