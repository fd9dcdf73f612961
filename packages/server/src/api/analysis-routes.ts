/**
 * /api/v1/analysis/*: lineage analysis beyond Marquez (root cause, impact, schema diff, run diff, column
 * paths). The questions are answered in src/analysis; this module parses node ids and times and documents
 * the answers.
 */
import type { FastifyInstance } from 'fastify';
import fastifyPlugin from 'fastify-plugin';
import { columnPaths } from '../analysis/column-paths.js';
import { resolveAnalysisNode, type AnalysisSource, type AnalysisTime } from '../analysis/context.js';
import { IMPACT_CHANGES, impact, type ImpactChange } from '../analysis/impact.js';
import { CAUSE_KINDS, rootCause } from '../analysis/root-cause.js';
import { declaredLineage } from '../analysis/declared.js';
import { graphDiff } from '../analysis/graph-diff.js';
import { runDiff } from '../analysis/run-diff.js';
import { schemaDiff } from '../analysis/schema-diff.js';
import { HeadwaterError } from '../core/errors.js';
import type { GraphNode, LineageDirection } from '../read-model/lineage-graph.js';
import { runUuidOf } from '../core/ids.js';
import { latestEventTime } from '../store/queries/analysis.js';
import type { AppDeps } from './deps.js';
import { parseNodeId, type NodeId } from '../core/node-id.js';
import { retainedAsOf, assertRetained } from './as-of.js';
import {
  arrayOf,
  boolean,
  integer,
  nullable,
  nullableNumber,
  nullableString,
  nullableTime,
  object,
  string,
  strings,
  time,
} from './schema-parts.js';
import { plainJson, responses } from './shapes.js';

// ---- schemas (documentation: responses are serialised with JSON.stringify, see plainJson) ------------------

const owner = object({ name: string, type: nullableString });
const ownerRollup = object({ name: string, type: nullableString, nodes: strings });
const column = object({ name: string, type: nullableString });
const typeChange = object({ name: string, fromType: nullableString, toType: nullableString });
const schemaChangeProperties = {
  added: arrayOf(column),
  removed: arrayOf(column),
  typeChanged: arrayOf(typeChange),
  breaking: { ...boolean, description: 'A column was removed or changed type' },
};
const schemaChange = object(schemaChangeProperties);
const transformation = object({
  type: string,
  subtype: string,
  description: nullableString,
  masking: boolean,
});
const columnHop = object({ origin: string, destination: string, transformations: arrayOf(transformation) });
const numberChange = object({ from: nullableNumber, to: nullableNumber, change: nullableNumber });

const nodeIdParam = {
  type: 'string',
  description:
    'dataset:<namespace>:<name>, datasetField:<namespace>:<dataset>:<field> or job:<namespace>:<name>',
} as const;

const rootCauseSchema = object({
  target: string,
  at: { ...time, description: 'The moment looked at: "now" for staleness' },
  lastGoodRunAt: { ...nullableTime, description: "End of the target's last COMPLETED write" },
  checked: object({ datasets: integer, jobs: integer }),
  causes: arrayOf(
    object({
      kind: { type: 'string', enum: CAUSE_KINDS },
      nodeId: string,
      distance: { ...integer, description: 'Edges from the target' },
      path: { ...strings, description: 'Node ids from the target to nodeId' },
      message: string,
      errorMessage: nullableString,
      run: nullable(
        object({
          id: string,
          state: string,
          startedAt: nullableTime,
          endedAt: nullableTime,
          contradictoryStates: {
            ...strings,
            description:
              'Every terminal state the run reported when they contradict each other (FAIL, then COMPLETE), most severe first; else empty',
          },
        }),
      ),
      assertions: arrayOf(
        object({
          assertion: string,
          column: string,
          name: nullableString,
          severity: nullableString,
          expected: nullableString,
          actual: nullableString,
          runId: string,
          at: time,
        }),
      ),
      staleness: nullable(
        object({
          lastWriteAt: { ...time, description: 'The last completed write, by any job' },
          medianIntervalMs: { type: 'number', description: 'The usual interval: that of `job`' },
          ageMs: { type: 'number' },
          thresholdMs: { type: 'number' },
          writes: integer,
          job: { ...string, description: 'The writer that writes the dataset most often' },
          floorMs: {
            type: 'number',
            description: 'Writes closer than this count as one; the least interval',
          },
          writers: arrayOf(
            object({ job: string, lastWriteAt: time, medianIntervalMs: { type: 'number' }, writes: integer }),
          ),
        }),
      ),
      schemaChange: nullable(
        object({
          ...schemaChangeProperties,
          fromVersion: string,
          toVersion: string,
          createdAt: time,
          createdByRun: nullableString,
        }),
      ),
    }),
  ),
});

const impactSchema = object({
  start: string,
  change: { type: 'string', enum: IMPACT_CHANGES },
  changes: arrayOf(
    object({
      dataset: string,
      fromVersion: nullableString,
      toVersion: nullableString,
      ...schemaChangeProperties,
      brokenColumns: strings,
    }),
  ),
  breaking: { ...boolean, description: 'Some downstream node is at level breaking' },
  nodes: arrayOf(
    object({
      nodeId: string,
      kind: { type: 'string', enum: ['dataset', 'job'] },
      distance: integer,
      level: { type: 'string', enum: ['breaking', 'direct', 'indirect'] },
      via: { ...string, description: 'The node before this one on a shortest path from the start' },
      owners: arrayOf(owner),
      columns: strings,
      breakingColumns: strings,
    }),
  ),
  owners: arrayOf(ownerRollup),
});

const versionRef = object({ version: string, createdAt: time });
const schemaDiffSchema = object({
  dataset: string,
  from: versionRef,
  to: versionRef,
  ...schemaChangeProperties,
  reach: arrayOf(
    object({ nodeId: string, dataset: string, distance: integer, path: strings, owners: arrayOf(owner) }),
  ),
  jobs: arrayOf(object({ nodeId: string, distance: integer, owners: arrayOf(owner) })),
  owners: arrayOf(ownerRollup),
});

const runSummary = object({
  id: string,
  job: string,
  state: string,
  startedAt: nullableTime,
  endedAt: nullableTime,
  durationMs: { type: ['integer', 'null'] },
});
const datasetDiff = object({
  dataset: string,
  status: { type: 'string', enum: ['added', 'removed', 'unchanged', 'versionChanged'] },
  fromVersion: nullableString,
  toVersion: nullableString,
  schemaChange: nullable(schemaChange),
  rowCount: numberChange,
});
const flippedAssertion = object({
  dataset: string,
  assertion: string,
  column: string,
  name: nullableString,
  from: boolean,
  to: boolean,
});
const edgeChange = object({ direction: { type: 'string', enum: ['input', 'output'] }, dataset: string });
const runDiffSchema = object({
  from: runSummary,
  to: runSummary,
  sameJob: boolean,
  duration: numberChange,
  inputs: arrayOf(datasetDiff),
  outputs: arrayOf(datasetDiff),
  edges: object({ added: arrayOf(edgeChange), removed: arrayOf(edgeChange) }),
  assertions: arrayOf(flippedAssertion),
});

const columnPathsSchema = object({
  start: string,
  direction: { type: 'string', enum: ['upstream', 'downstream'] },
  columns: arrayOf(
    object({
      nodeId: string,
      dataset: string,
      field: string,
      distance: integer,
      via: { ...string, description: 'The column one hop closer to the start on a shortest path' },
      transformations: arrayOf(transformation),
    }),
  ),
  edges: arrayOf(columnHop),
});

const runAtTime = object({
  id: string,
  state: string,
  startedAt: nullableTime,
  endedAt: nullableTime,
  durationMs: { type: ['integer', 'null'] },
});
const graphEdge = object({ origin: string, destination: string });
const graphDiffSchema = object({
  nodeId: string,
  from: time,
  to: time,
  depth: integer,
  direction: { type: 'string', enum: ['upstream', 'downstream', 'both'] },
  nodes: object({ added: strings, removed: strings, unchanged: integer }),
  edges: object({ added: arrayOf(graphEdge), removed: arrayOf(graphEdge), unchanged: integer }),
  datasets: arrayOf(
    object({
      dataset: string,
      fromVersion: nullableString,
      toVersion: nullableString,
      schemaChange: nullable(schemaChange),
      rowCount: numberChange,
    }),
  ),
  jobs: arrayOf(
    object({ job: string, from: nullable(runAtTime), to: nullable(runAtTime), duration: numberChange }),
  ),
  assertions: arrayOf(flippedAssertion),
});

const jobEdge = object({
  job: string,
  direction: { type: 'string', enum: ['input', 'output'] },
  dataset: string,
});
const declaredLineageSchema = object({
  job: string,
  at: { ...time, description: 'The moment looked at: declarations and runs later than it are ignored' },
  jobs: arrayOf(
    object({
      job: string,
      parents: {
        ...arrayOf(string),
        description:
          'The jobs of this answer it is a child job of (a node reused by two pipelines names both)',
      },
      declaredAt: { ...nullableTime, description: "The eventTime of the job's latest JobEvent; null: none" },
      run: nullable(object({ id: string, startedAt: nullableTime, endedAt: nullableTime })),
      declared: integer,
      observed: integer,
      notObserved: integer,
      undeclared: integer,
    }),
  ),
  declaredNotObserved: arrayOf(jobEdge),
  observedNotDeclared: arrayOf(jobEdge),
});

// ---- helpers -----------------------------------------------------------------------------------------------

type NamedNode = Exclude<NodeId, { type: 'run' }>;

/** Parses an analysis nodeId: a dataset, column or (where `jobs`) job, without a version. */
function parseAnalysisNodeId(nodeId: string, jobs: boolean): NamedNode {
  const node = parseNodeId(nodeId);
  if (node.type === 'run' || (node.type === 'job' && !jobs)) {
    throw new HeadwaterError(
      'INVALID_NODE_ID',
      `This analysis starts at a dataset or a column${jobs ? ' or a job' : ''}; got ${JSON.stringify(nodeId)}.`,
    );
  }
  if (node.version !== undefined) {
    throw new HeadwaterError(
      'INVALID_NODE_ID',
      `Analysis looks at the current lineage: drop the #<version> from ${JSON.stringify(nodeId)}.`,
    );
  }
  return node;
}

/** What the analyses read: the store, the read model and both graphs. */
export type AnalysisRouteDeps = Pick<AppDeps, 'db' | 'state' | 'graph' | 'columnGraph'>;

/** Registers the analysis routes. */
export const analysisRoutes = fastifyPlugin<AnalysisRouteDeps>(registerAnalysisRoutes, {
  name: 'analysis-routes',
});

function registerAnalysisRoutes(
  app: FastifyInstance,
  deps: AnalysisRouteDeps,
  done: (error?: Error) => void,
): void {
  const source: AnalysisSource = {
    db: deps.db,
    state: deps.state,
    graph: deps.graph,
    columnGraph: deps.columnGraph.analysisView,
  };
  const timeOf = async (at: string | undefined): Promise<AnalysisTime> => {
    if (at !== undefined) {
      const time = new Date(at);
      await assertRetained(deps.db, time, 'at');
      return { at: time };
    }
    return { at: (await latestEventTime(deps.db)) ?? new Date() };
  };

  app.get<{ Querystring: { nodeId: string; at?: string } }>(
    '/api/v1/analysis/root-cause',
    {
      ...plainJson,
      schema: {
        tags: ['Analysis'],
        summary:
          'Why a dataset, column or job may be wrong: failed runs, failed assertions, stale data, schema changes',
        description:
          'Walks upstream and lists, nearest first, jobs whose latest run failed or aborted, datasets whose ' +
          'latest assertions failed, datasets not written for over 1.5 x their usual interval (per writing job, the ' +
          'median of its last 10 completed writes, bursts as one write, at least 15 minutes; the most frequent ' +
          'writer counts), and schema changes since the target was last written, each with the ' +
          'path from the target.',
        querystring: {
          type: 'object',
          required: ['nodeId'],
          properties: {
            nodeId: {
              ...nodeIdParam,
              description:
                'dataset:<namespace>:<name>, datasetField:...:<field>, or job:<namespace>:<name> (a task that failed before writing its output); for a job, schema changes are not reported',
            },
            at: { ...time, description: '"Now" for staleness; default: the newest event time in the store' },
          },
        },
        response: responses(rootCauseSchema, 400, 404, 410),
      },
    },
    async (request) => {
      const node = resolveAnalysisNode(
        deps.state,
        parseAnalysisNodeId(request.query.nodeId, true),
        deps.graph.aliases,
      );
      return rootCause(source, node, await timeOf(request.query.at));
    },
  );

  app.get<{ Querystring: { nodeId: string; change: ImpactChange } }>(
    '/api/v1/analysis/impact',
    {
      ...plainJson,
      schema: {
        tags: ['Analysis'],
        summary: 'Everything downstream of a dataset, column or job, with owners, columns and impact level',
        description:
          'Levels: breaking (a removed or type-changed column reaches the node through column lineage), direct ' +
          '(at most two edges away), indirect. `change=latest` (default) considers the change between the ' +
          "two newest versions of the start dataset (a job's outputs); removed/typeChanged take the start " +
          'column(s) as removed or changed; none considers no change.',
        querystring: {
          type: 'object',
          required: ['nodeId'],
          properties: {
            nodeId: nodeIdParam,
            change: { type: 'string', enum: IMPACT_CHANGES, default: 'latest' },
          },
        },
        response: responses(impactSchema, 400, 404),
      },
    },
    async (request) => {
      const node = resolveAnalysisNode(
        deps.state,
        parseAnalysisNodeId(request.query.nodeId, true),
        deps.graph.aliases,
      );
      return impact(source, node, request.query.change, await timeOf(undefined));
    },
  );

  app.get<{ Querystring: { dataset: string; from?: string; to?: string } }>(
    '/api/v1/analysis/schema-diff',
    {
      ...plainJson,
      schema: {
        tags: ['Analysis'],
        summary: 'Columns added, removed and type-changed between two versions of a dataset, and their reach',
        description:
          'Removals and type changes are breaking; for them, the downstream columns reached through column ' +
          'lineage, the jobs in between and the owners. Without from and to: the two newest versions.',
        querystring: {
          type: 'object',
          required: ['dataset'],
          properties: {
            dataset: { type: 'string', description: 'dataset:<namespace>:<name>' },
            from: { type: 'string', format: 'uuid', description: 'The older version' },
            to: { type: 'string', format: 'uuid', description: 'The newer version; default: the newest' },
          },
        },
        response: responses(schemaDiffSchema, 400, 404),
      },
    },
    async (request) => {
      const parsed = parseAnalysisNodeId(request.query.dataset, false);
      if (parsed.type !== 'dataset') {
        throw new HeadwaterError('INVALID_NODE_ID', 'dataset must be a dataset:<namespace>:<name> nodeId.');
      }
      const node = resolveAnalysisNode(deps.state, parsed, deps.graph.aliases);
      return schemaDiff(source, (node as { id: number }).id, {
        from: request.query.from,
        to: request.query.to,
      });
    },
  );

  app.get<{ Querystring: { from: string; to: string } }>(
    '/api/v1/analysis/run-diff',
    {
      ...plainJson,
      schema: {
        tags: ['Analysis'],
        summary: 'What differs between two runs: dataset versions, schemas, assertions, duration, row counts',
        querystring: {
          type: 'object',
          required: ['from', 'to'],
          properties: {
            from: { type: 'string', description: 'The earlier run id' },
            to: { type: 'string', description: 'The later run id' },
          },
        },
        response: responses(runDiffSchema, 400, 404),
      },
    },
    (request) => runDiff(source, runUuidOf(request.query.from), runUuidOf(request.query.to)),
  );

  app.get<{ Querystring: { nodeId: string; at?: string } }>(
    '/api/v1/analysis/declared-lineage',
    {
      ...plainJson,
      schema: {
        tags: ['Analysis'],
        summary:
          'Declared against observed lineage: edges a JobEvent declares that recent runs did not touch, and back',
        description:
          "Compares the inputs and outputs of a job's latest JobEvent (its declared structure, such as a pipeline " +
          'pushed before it runs) with those its latest completed run (state COMPLETED, newest by start) read and ' +
          'wrote. For a parent job (a pipeline), every job below it, at any depth, is compared against its own latest ' +
          'completed run: its child jobs (the jobs whose runs name its runs in their parent facet, or whose JobEvent ' +
          "names it in the headwater_parentJob job facet and is no older than the parent's latest JobEvent), their " +
          'child jobs, and so on; a job under two of them is listed once with both parents. A job that never ' +
          'completed observed nothing; a job without a JobEvent declared nothing.',
        querystring: {
          type: 'object',
          required: ['nodeId'],
          properties: {
            nodeId: { ...nodeIdParam, description: 'job:<namespace>:<name>' },
            at: {
              ...time,
              description: 'Ignore what came later; default: the newest event time in the store',
            },
          },
        },
        response: responses(declaredLineageSchema, 400, 404),
      },
    },
    async (request) => {
      const parsed = parseAnalysisNodeId(request.query.nodeId, true);
      if (parsed.type !== 'job') {
        throw new HeadwaterError('INVALID_NODE_ID', 'Declared lineage is of a job: job:<namespace>:<name>.');
      }
      const node = resolveAnalysisNode(deps.state, parsed, deps.graph.aliases) as GraphNode;
      return declaredLineage(source, node.id, await timeOf(request.query.at));
    },
  );

  app.get<{ Querystring: { nodeId: string; direction: 'upstream' | 'downstream'; depth: number } }>(
    '/api/v1/analysis/column-paths',
    {
      ...plainJson,
      schema: {
        tags: ['Analysis'],
        summary: 'Columns upstream or downstream of a column, with the transformations along each path',
        description:
          'Every column reached within depth hops, with the column before it on a shortest path (`via`) and ' +
          'the transformations of that hop, ' +
          'and every column-lineage edge between the columns reached. A dataset nodeId starts from all its columns.',
        querystring: {
          type: 'object',
          required: ['nodeId'],
          properties: {
            nodeId: {
              ...nodeIdParam,
              description: 'datasetField:<namespace>:<dataset>:<field> or dataset:...',
            },
            direction: { type: 'string', enum: ['upstream', 'downstream'], default: 'upstream' },
            depth: { type: 'integer', minimum: 0, maximum: 1000, default: 20 },
          },
        },
        response: responses(columnPathsSchema, 400, 404),
      },
    },
    (request) => {
      const node = resolveAnalysisNode(
        deps.state,
        parseAnalysisNodeId(request.query.nodeId, false),
        deps.graph.aliases,
      );
      const starts =
        node.kind === 'datasetField'
          ? [{ datasetId: node.datasetId, field: node.field }]
          : deps.columnGraph.fieldsOf((node as { id: number }).id);
      return columnPaths(source, request.query.nodeId, starts, request.query.direction, request.query.depth);
    },
  );

  app.get<{
    Querystring: { nodeId: string; from: string; to?: string; depth: number; direction: LineageDirection };
  }>(
    '/api/v1/analysis/graph-diff',
    {
      ...plainJson,
      schema: {
        tags: ['Analysis'],
        summary: 'The lineage of a node at two times, compared',
        description:
          'Nodes and edges added and removed between `from` and `to` (event times), and for what was there both ' +
          'times: dataset versions with their schema changes and row counts, the latest run of each job, and ' +
          'assertions that flipped. Each side is what a store holding only the events up to that time shows.',
        querystring: {
          type: 'object',
          required: ['nodeId', 'from'],
          properties: {
            nodeId: { ...nodeIdParam, description: 'dataset:<namespace>:<name> or job:<namespace>:<name>' },
            from: { ...time, description: 'The earlier time' },
            to: { ...time, description: 'The later time; default: the newest event time in the store' },
            depth: { type: 'integer', minimum: 0, maximum: 1000, default: 20 },
            direction: { type: 'string', enum: ['upstream', 'downstream', 'both'], default: 'both' },
          },
        },
        response: responses(graphDiffSchema, 400, 404, 410),
      },
    },
    async (request) => {
      const { nodeId, depth, direction } = request.query;
      const parsed = parseAnalysisNodeId(nodeId, true);
      if (parsed.type === 'datasetField') {
        throw new HeadwaterError('INVALID_NODE_ID', 'A graph diff starts at a dataset or a job.');
      }
      const start = resolveAnalysisNode(deps.state, parsed, deps.graph.aliases) as GraphNode;
      const from = (await retainedAsOf(deps.db, request.query.from, 'from'))!;
      const to = (await retainedAsOf(deps.db, request.query.to, 'to')) ?? (await timeOf(undefined)).at;
      return graphDiff(source, { start, from, to, depth, direction });
    },
  );
  done();
}
