import type { FastifyInstance } from 'fastify';
import fastifyPlugin from 'fastify-plugin';
import { previewDiff, PreviewDiffSchema, type DiffSide } from '../analysis/preview-diff.js';
import { previewDiffMarkdown } from '../analysis/preview-diff-markdown.js';
import { parseDurationMs } from '../core/config-reader.js';
import { HeadwaterError } from '../core/errors.js';
import { previewOfUrl, withoutPreview, type PreviewInput } from '../model/previews.js';
import type { PreviewRecord } from '../store/queries/previews.js';
import type { AppDeps } from './deps.js';
import { parseJsonBody } from './json-body.js';
import { plainJson } from './plain-json.js';
import { responses } from './schemas/common.js';
import { PreviewBodySchema, PreviewSchema, type PreviewBody, type PreviewJson } from './schemas/previews.js';

/** What the preview routes need of the server's previews (src/servers/previews.ts). */
export interface PreviewHost {
  list(): Promise<PreviewRecord[]>;
  get(name: string): Promise<PreviewRecord | undefined>;
  create(input: PreviewInput, by: string): Promise<PreviewRecord>;
  remove(name: string): Promise<boolean>;
  /** The preview's own routes (NOT_FOUND for an unknown preview). */
  app(name: string): Promise<FastifyInstance>;
  /** What a diff reads of the preview. */
  source(name: string): Promise<DiffSide>;
}

/** What the preview routes need: the previews, and production's side of a diff. */
export type PreviewRouteDeps = Pick<AppDeps, 'db' | 'state' | 'graph' | 'columnGraph' | 'replication'> & {
  readonly previews: PreviewHost | undefined;
};

/** Headers of a preview's answer not passed on: the connection's, and those this server sets itself. */
const DROPPED = new Set(['content-length', 'connection', 'keep-alive', 'transfer-encoding', 'x-request-id']);

function previewJson(record: PreviewRecord): PreviewJson {
  return {
    name: record.name,
    jobNamespace: record.jobNamespace,
    baseNamespace: record.baseNamespace,
    pullRequest: record.pullRequest,
    commitSha: record.commitSha,
    mappings: record.mappings,
    createdAt: record.createdAt.toISOString(),
    createdBy: record.createdBy,
    expiresAt: record.expiresAt?.toISOString() ?? null,
  };
}

/**
 * /api/v1/previews: a pull request's pipeline run apart from production, and its lineage diffed against
 * production's; and `?preview=NAME` on any read, answered from the preview's own store.
 */
export const previewRoutes = fastifyPlugin<PreviewRouteDeps>(registerPreviewRoutes, {
  name: 'preview-routes',
});

function registerPreviewRoutes(
  app: FastifyInstance,
  deps: PreviewRouteDeps,
  done: (error?: Error) => void,
): void {
  const { previews } = deps;
  const host = (): PreviewHost => {
    if (!previews) throw new HeadwaterError('NOT_FOUND', 'A preview has no previews of its own.');
    return previews;
  };
  const found = async (name: string): Promise<PreviewRecord> => {
    const record = await host().get(name);
    if (!record) throw new HeadwaterError('NOT_FOUND', `No preview named ${name}; see GET /api/v1/previews.`);
    return record;
  };

  // A read with ?preview=NAME is the preview's: answered by its own routes, after this server's security hooks
  // (registered before this plugin) have checked the caller, and its answer goes out through them too.
  app.addHook('onRequest', async (request, reply) => {
    // A follower hands preview reads to the writer, which holds the previews (replica/forward.ts).
    if (!request.url.startsWith('/api/') || deps.replication.role === 'follower') return;
    const name = previewOfUrl(request.url);
    if (name === undefined) return;
    if (request.method !== 'GET' && request.method !== 'HEAD')
      throw new HeadwaterError(
        'BAD_REQUEST',
        '?preview= is for reads: events reach a preview by their job namespace (or pull request), and edits are ' +
          "production's.",
      );
    const target = await host().app(name);
    const answer = await target.inject({
      method: request.method,
      url: withoutPreview(request.url),
      headers: {
        accept: request.headers.accept ?? '*/*',
        ...(request.headers['accept-encoding']
          ? { 'accept-encoding': request.headers['accept-encoding'] }
          : {}),
      },
    });
    void reply.code(answer.statusCode);
    for (const [header, value] of Object.entries(answer.headers))
      if (value !== undefined && !DROPPED.has(header)) void reply.header(header, value);
    void reply.header('x-headwater-preview', name);
    return reply.send(answer.rawPayload);
  });

  app.addSchema(PreviewSchema);
  // POST answers 201 with the preview, or one of these errors.
  const { 200: _ok, ...refusals } = responses(null, 400, 403, 409);
  const created = { 201: { $ref: 'Preview#' }, ...refusals };
  const nameParams = {
    type: 'object',
    properties: { name: { type: 'string' } },
    required: ['name'],
  } as const;

  app.get(
    '/api/v1/previews',
    {
      ...plainJson,
      config: { access: 'read' },
      schema: {
        tags: ['Previews'],
        summary: 'The previews: pull requests whose pipelines run apart from production',
        response: responses({
          type: 'object',
          properties: { previews: { type: 'array', items: { $ref: 'Preview#' } } },
          required: ['previews'],
        }),
      },
    },
    async () => ({ previews: (await host().list()).map(previewJson) }),
  );

  app.post<{ Body: PreviewBody }>(
    '/api/v1/previews',
    {
      ...plainJson,
      config: { access: 'write' },
      preValidation: parseJsonBody,
      schema: {
        tags: ['Previews'],
        summary: 'Create a preview: events of its job namespace (or pull request) go to it, not production',
        description:
          "Events whose job namespace is the preview's, or whose job's sourceCodeLocation names its pull request " +
          "or commit, are kept in the preview's own store: production's graph, search, statistics, incidents and " +
          'retention never see them. Reads take `?preview=NAME`. `mappings` say which production dataset (and ' +
          "job) a preview one stands for, since a pull request's tables are named differently: `*` in `from` " +
          'matches any text, and each `*` of `to` takes what the one of `from` matched. Needs the write role in ' +
          'the job namespace.',
        body: PreviewBodySchema,
        response: created,
      },
    },
    async (request, reply) => {
      const body = request.body;
      if (!request.principal.canWrite(body.jobNamespace))
        throw new HeadwaterError(
          'FORBIDDEN',
          `The caller (${request.principal.name}) may not write ${body.jobNamespace}, the preview's job namespace.`,
        );
      let ttlMs: number | null = null;
      if (body.ttl !== undefined && body.ttl !== null) {
        const parsed = parseDurationMs(body.ttl, { bareSeconds: false });
        if (parsed === undefined || parsed <= 0)
          throw new HeadwaterError(
            'BAD_REQUEST',
            `ttl ${JSON.stringify(body.ttl)} is not a duration such as 14d or 12h.`,
          );
        ttlMs = parsed;
      }
      const record = await host().create(
        {
          name: body.name,
          jobNamespace: body.jobNamespace,
          baseNamespace: body.baseNamespace,
          pullRequest: body.pullRequest ?? null,
          commitSha: body.commitSha ?? null,
          mappings: (body.mappings ?? []).map((mapping) => ({
            from: { namespace: mapping.from.namespace ?? null, name: mapping.from.name },
            to: { namespace: mapping.to.namespace ?? null, name: mapping.to.name },
          })),
          ttlMs,
        },
        request.principal.subject,
      );
      return reply.code(201).send(previewJson(record));
    },
  );

  app.get<{ Params: { name: string } }>(
    '/api/v1/previews/:name',
    {
      ...plainJson,
      config: { access: 'read' },
      schema: {
        tags: ['Previews'],
        summary: 'One preview',
        params: nameParams,
        response: responses({ $ref: 'Preview#' }, 404),
      },
    },
    async (request) => previewJson(await found(request.params.name)),
  );

  app.delete<{ Params: { name: string } }>(
    '/api/v1/previews/:name',
    {
      ...plainJson,
      config: { access: 'write' },
      schema: {
        tags: ['Previews'],
        summary: 'Delete a preview and every event it holds',
        params: nameParams,
        response: responses({ $ref: 'Preview#' }, 403, 404),
      },
    },
    async (request) => {
      const record = await found(request.params.name);
      if (!request.principal.canWrite(record.jobNamespace))
        throw new HeadwaterError(
          'FORBIDDEN',
          `The caller (${request.principal.name}) may not write ${record.jobNamespace}, the preview's job namespace.`,
        );
      await host().remove(record.name);
      return previewJson(record);
    },
  );

  app.get<{ Params: { name: string }; Querystring: { format: 'json' | 'markdown' } }>(
    '/api/v1/previews/:name/diff',
    {
      ...plainJson,
      config: { access: 'read' },
      schema: {
        tags: ['Previews'],
        summary:
          "A preview's lineage against production's: each change, its category and the consumers it reaches",
        description:
          'Datasets and jobs added and removed; columns added, removed, renamed (same lineage, new name) and ' +
          'retyped; columns derived otherwise; rows kept otherwise (dataset-level lineage, or a WHERE, JOIN, ' +
          'GROUP BY, HAVING, LIMIT or DISTINCT changed in the SQL); SQL changed in its expressions only; failed ' +
          "runs; row-count drift. Each change reaches production's consumers (any producer's) with distance, " +
          'owners and the columns it breaks. `format=markdown` gives a pull request comment.',
        params: nameParams,
        querystring: {
          type: 'object',
          properties: { format: { type: 'string', enum: ['json', 'markdown'], default: 'json' } },
        },
        response: responses(PreviewDiffSchema, 404),
      },
    },
    async (request, reply) => {
      const record = await found(request.params.name);
      for (const namespace of [record.baseNamespace, record.jobNamespace])
        if (!request.principal.canRead(namespace))
          throw new HeadwaterError(
            'FORBIDDEN',
            `The caller (${request.principal.name}) may not read ${namespace}, which the diff shows.`,
          );
      const production: DiffSide = {
        db: deps.db,
        state: deps.state,
        graph: deps.graph,
        columnGraph: deps.columnGraph.analysisView,
        columns: deps.columnGraph,
      };
      const diff = await previewDiff(record, await host().source(record.name), production);
      if (request.query.format === 'markdown')
        return reply.type('text/markdown; charset=utf-8').send(previewDiffMarkdown(diff));
      return diff;
    },
  );
  done();
}
