/**
 * /api/v1/analysis/*: lineage analysis beyond Marquez (root cause, impact, schema diff, run diff, column
 * paths). The questions are answered in src/analysis; this module parses node ids and times and documents
 * the answers.
 */
import type { FastifyInstance } from 'fastify';
import fastifyPlugin from 'fastify-plugin';
import { ClassificationSchema, classification } from '../analysis/classification.js';
import { JourneySchema, journey } from '../analysis/journey.js';
import { ModelsSchema, models } from '../analysis/models.js';
import { PoliciesSchema, PolicyReportSchema, checkPolicies, type Policies } from '../analysis/policies.js';
import { parseJsonBody } from './json-body.js';
import { journeyCsv, journeyHtml, journeyMarkdown } from '../analysis/journey-render.js';
import { ColumnPathsResultSchema, columnPaths } from '../analysis/column-paths.js';
import { resolveAnalysisNode, type AnalysisSource, type AnalysisTime } from '../analysis/context.js';
import { IMPACT_CHANGES, ImpactResultSchema, impact, type ImpactChange } from '../analysis/impact.js';
import { RootCauseResultSchema, rootCause } from '../analysis/root-cause.js';
import { DeclaredLineageResultSchema, declaredLineage } from '../analysis/declared.js';
import { GraphDiffResultSchema, graphDiff } from '../analysis/graph-diff.js';
import { RunDiffResultSchema, runDiff } from '../analysis/run-diff.js';
import { SchemaDiffResultSchema, schemaDiff } from '../analysis/schema-diff.js';
import { HeadwaterError } from '../core/errors.js';
import type { GraphNode, LineageDirection } from '../read-model/lineage-graph.js';
import { runUuidOf } from '../core/ids.js';
import { latestEventTime } from '../store/queries/analysis.js';
import type { AppDeps } from './deps.js';
import { parseNodeId, type NodeId } from '../core/node-id.js';
import { retainedAsOf, assertRetained } from './as-of.js';
import { plainJson } from './plain-json.js';
import { responses } from './schemas/common.js';

/** A time in a query string. */
const timeParam = { type: 'string', format: 'date-time' } as const;

const nodeIdParam = {
  type: 'string',
  description:
    'dataset:<namespace>:<name>, datasetField:<namespace>:<dataset>:<field> or job:<namespace>:<name>',
} as const;

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

  /** A journey's window: `to` defaults to the latest event, `from` to 90 days before; 410 before the horizon. */
  const journeyWindow = async (fromText: string | undefined, toText: string | undefined) => {
    const to = toText !== undefined ? new Date(toText) : ((await latestEventTime(deps.db)) ?? new Date());
    const from = fromText !== undefined ? new Date(fromText) : new Date(to.getTime() - 90 * 86_400_000);
    if (from.getTime() > to.getTime())
      throw new HeadwaterError('BAD_REQUEST', `from ${from.toISOString()} is after to ${to.toISOString()}.`);
    await assertRetained(deps.db, from, 'from');
    return { from, to };
  };

  app.get<{ Querystring: { from?: string; to?: string; served?: boolean; tainted?: boolean } }>(
    '/api/v1/compliance/models',
    {
      ...plainJson,
      schema: {
        tags: ['Compliance'],
        summary: 'ML models: who trained and serves each, and the bad or erased data it was trained on',
        description:
          'A model is a dataset whose datasetType facet says MODEL; its training runs wrote it, its serving jobs ' +
          'read it. `tainted` lists the datasets on its upstream journey over [from, to] with an assertion that ' +
          'failed in the window (bad) or a lifecycleStateChange DROP or TRUNCATE (erased). `served=true` keeps ' +
          'the served models, `tainted=true` those trained on bad or erased data: both together answer "which ' +
          'served models were trained on data that was bad or has been erased?". The window defaults as the ' +
          "journey's does.",
        querystring: {
          type: 'object',
          properties: {
            from: timeParam,
            to: timeParam,
            served: { type: 'boolean' },
            tainted: { type: 'boolean' },
          },
        },
        response: responses(ModelsSchema, 400, 410),
      },
    },
    async (request) => {
      const { from, to } = await journeyWindow(request.query.from, request.query.to);
      const answer = await models(
        { db: deps.db, state: deps.state, columns: deps.columnGraph, graph: deps.graph },
        { from, to },
      );
      const { served, tainted } = request.query;
      return {
        ...answer,
        models: answer.models.filter(
          (model) =>
            (served === undefined || served === model.servedBy.length > 0) &&
            (tainted === undefined || tainted === model.tainted.length > 0),
        ),
      };
    },
  );

  app.get<{
    Querystring: {
      nodeId: string;
      from?: string;
      to?: string;
      direction: 'downstream' | 'upstream';
      depth: number;
      tags?: string;
      jurisdiction?: string[];
      format: 'json' | 'markdown' | 'csv' | 'html';
    };
  }>(
    '/api/v1/compliance/journey',
    {
      ...plainJson,
      schema: {
        tags: ['Compliance'],
        summary:
          'The data journey of a dataset or column over a window: each hop with the evidence that it happened',
        description:
          'A hop is there when a run within [from, to] read its source and wrote its target (a column hop also ' +
          'needs column lineage between the two columns as of `to`). Each hop has the job between, its versions, ' +
          'SQL and code locations in the window, the transformations (masking included), the runs that moved the ' +
          'data (count, first, last, samples with the ids of the raw events that prove them) and whether it ' +
          'crosses jurisdictions (`jurisdiction=PATTERN=NAME`, repeated, maps storage namespaces; `*` matches any ' +
          'text). Each node has its owner periods over the window, the asked-for `tags` it carried at `to` and ' +
          'its retention evidence (lifecycleStateChange facets). The report ends with its bounds and a SHA-256 of ' +
          'its canonical JSON. `from` defaults to 90 days before `to`, `to` to the latest event; a `from` before ' +
          'the retention horizon is 410. `format`: json, markdown, csv (one row per hop) or html (printable).',
        querystring: {
          type: 'object',
          required: ['nodeId'],
          properties: {
            nodeId: nodeIdParam,
            from: timeParam,
            to: timeParam,
            direction: { type: 'string', enum: ['downstream', 'upstream'], default: 'downstream' },
            depth: { type: 'integer', minimum: 1, maximum: 100, default: 20 },
            tags: { type: 'string', description: 'Comma-separated tags to report (pii,gdpr)' },
            jurisdiction: {
              type: 'array',
              items: { type: 'string', pattern: '^[^=]+=[^=]+$' },
              maxItems: 100,
            },
            format: { type: 'string', enum: ['json', 'markdown', 'csv', 'html'], default: 'json' },
          },
        },
        response: responses(JourneySchema, 400, 404, 410),
      },
    },
    async (request, reply) => {
      const query = request.query;
      const parsed = parseAnalysisNodeId(query.nodeId, false);
      const start = resolveAnalysisNode(deps.state, parsed, deps.graph.aliases);
      if (start.kind === 'job')
        throw new HeadwaterError('INVALID_NODE_ID', 'A journey starts at a dataset or a column.');
      const { from, to } = await journeyWindow(query.from, query.to);
      const report = await journey(
        { db: deps.db, state: deps.state, columns: deps.columnGraph },
        {
          start,
          from,
          to,
          direction: query.direction,
          depth: query.depth,
          tags: (query.tags ?? '')
            .split(',')
            .map((tag) => tag.trim())
            .filter((tag) => tag !== ''),
          jurisdictions: (query.jurisdiction ?? []).map((entry) => {
            const at = entry.indexOf('=');
            return { pattern: entry.slice(0, at), jurisdiction: entry.slice(at + 1) };
          }),
        },
      );
      if (query.format === 'markdown')
        return reply.type('text/markdown; charset=utf-8').send(journeyMarkdown(report));
      if (query.format === 'csv') return reply.type('text/csv; charset=utf-8').send(journeyCsv(report));
      if (query.format === 'html') return reply.type('text/html; charset=utf-8').send(journeyHtml(report));
      return report;
    },
  );

  app.post<{ Body: Policies }>(
    '/api/v1/compliance/policies/check',
    {
      ...plainJson,
      // A question about the lineage, not a change to it: readers may ask.
      config: { access: 'read' },
      preValidation: parseJsonBody,
      schema: {
        tags: ['Compliance'],
        summary: 'Check policies on where a tag reaches and who reads it (headwater policy check -f FILE)',
        description:
          '`neverReaches`: the tag reaches no dataset whose storage namespace (or namespace:name) matches a ' +
          'pattern (`*` any text); masking stops a tag, so this reads "unless masked"; a coarse reach (a job ' +
          'without column lineage) breaks it unless `allowCoarse`. `readersNeedTag`: every job reading a dataset ' +
          'the tag reaches carries this tag (tag routes or a tags facet). Checked against the lineage now.',
        body: PoliciesSchema,
        response: responses(PolicyReportSchema, 400),
      },
    },
    (request) => checkPolicies(source, request.body.policies),
  );

  app.get<{ Querystring: { tag: string } }>(
    '/api/v1/compliance/classified',
    {
      ...plainJson,
      schema: {
        tags: ['Compliance'],
        summary: 'Everything a tag (pii) reaches downstream of where it was put, and how',
        description:
          'Seeds are datasets and fields carrying the tag (put on through the tag routes, or in a tags facet: ' +
          'an entry whose key is the tag, or whose key:value is). A classified column classifies the columns it ' +
          'feeds through DIRECT and INDIRECT column lineage, except across an edge whose transformations all ' +
          'mask (listed in `stopped`). A job with no column lineage from a classified dataset classifies every ' +
          'column of its output, flagged `coarse`. Computed from the lineage now, never stored.',
        querystring: {
          type: 'object',
          properties: { tag: { type: 'string', minLength: 1, maxLength: 256 } },
          required: ['tag'],
        },
        response: responses(ClassificationSchema, 400),
      },
    },
    (request) => classification(source, request.query.tag),
  );

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
            at: {
              ...timeParam,
              description: '"Now" for staleness; default: the newest event time in the store',
            },
          },
        },
        response: responses(RootCauseResultSchema, 400, 404, 410),
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
        response: responses(ImpactResultSchema, 400, 404),
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
        response: responses(SchemaDiffResultSchema, 400, 404),
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
        response: responses(RunDiffResultSchema, 400, 404),
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
              ...timeParam,
              description: 'Ignore what came later; default: the newest event time in the store',
            },
          },
        },
        response: responses(DeclaredLineageResultSchema, 400, 404),
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
        response: responses(ColumnPathsResultSchema, 400, 404),
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
            from: { ...timeParam, description: 'The earlier time' },
            to: { ...timeParam, description: 'The later time; default: the newest event time in the store' },
            depth: { type: 'integer', minimum: 0, maximum: 1000, default: 20 },
            direction: { type: 'string', enum: ['upstream', 'downstream', 'both'], default: 'both' },
          },
        },
        response: responses(GraphDiffResultSchema, 400, 404, 410),
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
