import { randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fastifyPlugin from 'fastify-plugin';
import { HeadwaterError } from '../core/errors.js';
import type { IngestFrontDoor } from '../accept/front-door.js';
import { isUuid, runUuidOf } from '../core/ids.js';
import {
  LEGACY_RUN_ACTIONS,
  legacyDatasetEvent,
  legacyJobEvent,
  legacyNewRunEvent,
  legacyProducer,
  legacyRunTransitionEvent,
  type LegacyField,
  type LegacyRef,
  type LegacyRunAction,
} from '../accept/marquez-legacy.js';
import type { IngestPipeline } from '../accept/pipeline.js';
import type { ServerConfig } from '../config/server-config.js';
import type { TagChange } from '../store/edits.js';
import { datasetNamed, jobNamed, namespaceNamed } from '../store/queries/lookup.js';
import { findRuns } from '../store/queries/runs.js';
import { findSource } from '../store/queries/sources.js';
import type { AppDeps } from './deps.js';
import { forbiddenReason, outcomeError } from './ingest-routes.js';
import { Ref } from '../core/json-schema.js';
import { NO_NUL_PATTERN, parseJsonBody, storedText } from './json-body.js';
import { loadDatasets } from './json/dataset.js';
import { loadJobs } from './json/job.js';
import { sourceJson } from './json/namespace.js';
import { loadRuns } from './json/run.js';
import { plainJson } from './plain-json.js';
import { responses } from './schemas/common.js';
import { DatasetSchema } from './schemas/dataset.js';
import { JobSchema } from './schemas/job.js';
import { SourceSchema } from './schemas/namespace.js';
import { RunSchema } from './schemas/run.js';

/**
 * What the legacy write routes need: the front door they send their events through, the writer that tags, the
 * readers, when a run is stale, and the version (the producer of the events they make).
 */
export type LegacyRouteDeps = Pick<AppDeps, 'db' | 'state' | 'graph' | 'version'> & {
  readonly frontDoor: Pick<IngestFrontDoor, 'submit' | 'declareSource'> &
    Partial<Pick<IngestFrontDoor, 'report'>>;
  readonly pipeline: Pick<IngestPipeline, 'tag'>;
  readonly config: Pick<ServerConfig, 'staleRunAfterMs'>;
};

const TAGS = ['Marquez legacy write API'];
const DEPRECATED =
  "Marquez's deprecated write API, kept for its clients: the call is turned into the OpenLineage event a " +
  'producer would send for it and ingested as POST /api/v1/lineage ingests, so what it makes is served ' +
  'everywhere as if sent that way. Needs the writer role over every namespace it names.';
const write = { access: 'write' } as const;
const text = { type: 'string' } as const;
const nullableText = { type: ['string', 'null'], pattern: NO_NUL_PATTERN } as const;
const ref = {
  type: 'object',
  properties: { namespace: storedText, name: storedText },
  required: ['namespace', 'name'],
} as const;

interface SourceBody {
  type: string;
  connectionUrl: string;
  description?: string | null;
}

interface DatasetBody {
  type: string;
  physicalName?: string;
  sourceName: string;
  fields?: LegacyField[] | null;
  tags?: string[] | null;
  description?: string | null;
  runId?: string | null;
}

interface JobBody {
  type: string;
  inputs?: LegacyRef[] | null;
  outputs?: LegacyRef[] | null;
  location?: string | null;
  description?: string | null;
}

interface RunBody {
  id?: string | null;
  nominalStartTime?: string | null;
  nominalEndTime?: string | null;
  args?: Record<string, string> | null;
}

/** Response schemas whose success is 201 (Created) instead of 200. */
function created({ 200: ok, ...errors }: Record<number, unknown>): Record<number, unknown> {
  return { 201: ok, ...errors };
}

/** `value` as a time, or a 400 that names the parameter. */
function timeParam(value: string | undefined | null, where: string): Date | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  const ms = Date.parse(value);
  if (!Number.isFinite(ms)) {
    throw new HeadwaterError(
      'BAD_REQUEST',
      `${where} ${JSON.stringify(value)} is not an ISO-8601 time; send e.g. 2024-05-01T10:00:00Z.`,
    );
  }
  return new Date(ms);
}

/**
 * Marquez's legacy (deprecated) write API: sources, datasets, jobs, runs and run transitions. Every call but the
 * source PUT becomes an OpenLineage event sent through the front door (src/accept/marquez-legacy.ts says which),
 * so the writer allocates the ids and derives the state; the answers are the read API's shapes.
 */
export const legacyRoutes = fastifyPlugin<LegacyRouteDeps>(registerLegacyRoutes, { name: 'legacy-routes' });

function registerLegacyRoutes(
  app: FastifyInstance,
  deps: LegacyRouteDeps,
  done: (error?: Error) => void,
): void {
  const { db, state, frontDoor, pipeline } = deps;
  const producer = legacyProducer(deps.version);

  /** Ingests one event the caller may write, or throws what POST /api/v1/lineage would answer. */
  async function ingest(request: FastifyRequest, event: unknown): Promise<void> {
    const forbidden = forbiddenReason(request.principal, event);
    if (forbidden !== undefined) {
      frontDoor.report?.([event], [{ status: 'forbidden' }]);
      throw new HeadwaterError('FORBIDDEN', forbidden);
    }
    const [outcome] = await frontDoor.submit([{ value: event }]);
    const error = outcomeError(outcome!);
    if (error) throw error;
  }

  /** The Job's current inputs, outputs and location (what a legacy run is mapped to), as the Job shape gives them. */
  async function jobIo(
    jobId: number,
  ): Promise<{ inputs: LegacyRef[]; outputs: LegacyRef[]; location: string | null }> {
    const job = (await loadJobs(deps, [jobId])).get(jobId);
    return { inputs: job?.inputs ?? [], outputs: job?.outputs ?? [], location: job?.location ?? null };
  }

  async function runAnswer(uuid: string) {
    const run = (await loadRuns(db, [uuid], deps.config.staleRunAfterMs)).get(uuid);
    if (!run) throw new HeadwaterError('NOT_FOUND', `Run '${uuid}' vanished while it was read; retry.`);
    return run;
  }

  async function runNamed(id: string) {
    const [record] = await findRuns(db, [runUuidOf(id)]);
    if (!record) {
      throw new HeadwaterError(
        'NOT_FOUND',
        `Run '${id}' not found. Create it with POST /api/v1/namespaces/{namespace}/jobs/{job}/runs.`,
      );
    }
    return record;
  }

  app.put<{ Params: { source: string }; Body: SourceBody }>(
    '/api/v1/sources/:source',
    {
      ...plainJson,
      config: { ...write, global: true },
      preValidation: parseJsonBody,
      schema: {
        tags: TAGS,
        summary: 'Create or update a source (deprecated in Marquez)',
        description:
          "Marquez's deprecated source PUT. OpenLineage has no event for a source alone, so this is the one " +
          'legacy write that is not an event: the source is stored as the dataSource facet of the datasets ' +
          'naming it would store it, with the type and description given. Sources are not in a namespace: ' +
          "this needs the writer role over every namespace ('*').",
        params: { type: 'object', properties: { source: text }, required: ['source'] },
        body: {
          type: 'object',
          properties: {
            type: { ...storedText, minLength: 1, description: 'e.g. POSTGRESQL, MYSQL, KAFKA' },
            connectionUrl: { ...storedText, minLength: 1 },
            description: nullableText,
          },
          required: ['type', 'connectionUrl'],
        },
        response: responses(Ref(SourceSchema), 400, 401, 403),
      },
    },
    async (request) => {
      const { type, connectionUrl, description } = request.body;
      const record = await frontDoor.declareSource({
        name: request.params.source,
        type: type.toUpperCase(),
        connectionUrl,
        description: description ?? null,
      });
      return sourceJson(record);
    },
  );

  app.put<{ Params: { namespace: string; dataset: string }; Body: DatasetBody }>(
    '/api/v1/namespaces/:namespace/datasets/:dataset',
    {
      ...plainJson,
      config: write,
      preValidation: parseJsonBody,
      schema: {
        tags: TAGS,
        summary: 'Create or update a dataset (deprecated in Marquez)',
        description:
          `${DEPRECATED} Sent as a DatasetEvent with the schema (fields), dataSource (the source) and ` +
          "documentation facets; with runId, as that run's RunEvent (no eventType) naming the dataset as " +
          'its output. Tags are then set as POST .../tags does. The namespace and the source must exist.',
        params: {
          type: 'object',
          properties: { namespace: text, dataset: text },
          required: ['namespace', 'dataset'],
        },
        body: {
          type: 'object',
          properties: {
            type: { type: 'string', enum: ['DB_TABLE', 'STREAM'] },
            physicalName: storedText,
            sourceName: { ...storedText, minLength: 1 },
            fields: {
              type: ['array', 'null'],
              items: {
                type: 'object',
                properties: {
                  name: { ...storedText, minLength: 1 },
                  type: nullableText,
                  description: nullableText,
                  tags: { type: ['array', 'null'], items: storedText },
                },
                required: ['name'],
              },
            },
            tags: { type: ['array', 'null'], items: storedText },
            description: nullableText,
            runId: {
              type: ['string', 'null'],
              description: 'The run that wrote this version of the dataset',
            },
            schemaLocation: nullableText,
          },
          required: ['type', 'sourceName'],
        },
        response: responses(Ref(DatasetSchema), 400, 401, 403, 404, 422),
      },
    },
    async (request) => {
      const { namespace, dataset } = request.params;
      const body = request.body;
      namespaceNamed(state, namespace);
      const source = await findSource(db, body.sourceName);
      if (!source) {
        throw new HeadwaterError(
          'NOT_FOUND',
          `Source '${body.sourceName}' not found. Create it with PUT /api/v1/sources/{name} first.`,
        );
      }
      let run: { id: string; job: LegacyRef } | undefined;
      if (body.runId) {
        const record = await runNamed(body.runId);
        run = { id: record.uuid, job: { namespace: record.namespace, name: record.jobName } };
      }
      await ingest(
        request,
        legacyDatasetEvent(
          {
            dataset: { namespace, name: dataset },
            source: { name: source.name, connectionUrl: source.connectionUrl },
            fields: body.fields,
            description: body.description,
            run,
          },
          producer,
          new Date(),
        ),
      );
      const { id } = datasetNamed(state, namespace, dataset);
      const fieldTags = (body.fields ?? []).flatMap((field) =>
        (field.tags ?? []).map((tag) => [field.name, tag] as const),
      );
      const tags: TagChange[] = [
        ...(body.tags ?? []).map((tag) => ({ kind: 'dataset' as const, id, tag })),
        ...fieldTags.map(([field, tag]) => ({ kind: 'field' as const, id, field, tag })),
      ];
      if (tags.length > 0) await pipeline.tag(tags);
      const json = (await loadDatasets(db, [id])).get(id);
      if (!json) throw new HeadwaterError('NOT_FOUND', `Dataset ${id} vanished while it was read; retry.`);
      return json;
    },
  );

  app.put<{ Params: { namespace: string; job: string }; Body: JobBody }>(
    '/api/v1/namespaces/:namespace/jobs/:job',
    {
      ...plainJson,
      config: write,
      preValidation: parseJsonBody,
      schema: {
        tags: TAGS,
        summary: 'Create or update a job (deprecated in Marquez)',
        description:
          `${DEPRECATED} Sent as a JobEvent declaring the inputs and outputs, with the documentation and ` +
          'sourceCodeLocation facets (and jobType for a STREAM job). The namespace and the datasets must exist.',
        params: {
          type: 'object',
          properties: { namespace: text, job: text },
          required: ['namespace', 'job'],
        },
        body: {
          type: 'object',
          properties: {
            type: { type: 'string', enum: ['BATCH', 'STREAM', 'SERVICE'] },
            inputs: { type: ['array', 'null'], items: ref },
            outputs: { type: ['array', 'null'], items: ref },
            location: nullableText,
            description: nullableText,
            context: { type: ['object', 'null'], additionalProperties: true },
            runId: { type: ['string', 'null'] },
          },
          required: ['type'],
        },
        response: responses(Ref(JobSchema), 400, 401, 403, 404, 422),
      },
    },
    async (request) => {
      const { namespace, job } = request.params;
      const body = request.body;
      namespaceNamed(state, namespace);
      const inputs = body.inputs ?? [];
      const outputs = body.outputs ?? [];
      // As Marquez: a job is declared over datasets that exist.
      for (const dataset of [...inputs, ...outputs]) datasetNamed(state, dataset.namespace, dataset.name);
      await ingest(
        request,
        legacyJobEvent(
          {
            job: { namespace, name: job },
            type: body.type,
            inputs,
            outputs,
            location: body.location,
            description: body.description,
          },
          producer,
          new Date(),
        ),
      );
      const { id } = jobNamed(state, namespace, job);
      const json = (await loadJobs(deps, [id])).get(id);
      if (!json) throw new HeadwaterError('NOT_FOUND', `Job ${id} vanished while it was read; retry.`);
      return json;
    },
  );

  app.post<{ Params: { namespace: string; job: string }; Body: RunBody }>(
    '/api/v1/namespaces/:namespace/jobs/:job/runs',
    {
      ...plainJson,
      config: write,
      preValidation: parseJsonBody,
      schema: {
        tags: TAGS,
        summary: 'Create a run of a job, in state NEW (deprecated in Marquez)',
        description:
          `${DEPRECATED} Sent as a RunEvent without eventType (a run that has not started: NEW) naming the ` +
          "job's current inputs and outputs, with the nominalTime facet and the args given. Answers 201 with " +
          'the Run and its URL in Location; 409 if a run with that id exists.',
        params: {
          type: 'object',
          properties: { namespace: text, job: text },
          required: ['namespace', 'job'],
        },
        body: {
          type: 'object',
          properties: {
            id: {
              type: ['string', 'null'],
              format: 'uuid',
              description: 'The run id (a new UUID if absent)',
            },
            nominalStartTime: { type: ['string', 'null'], format: 'date-time' },
            nominalEndTime: { type: ['string', 'null'], format: 'date-time' },
            args: { type: ['object', 'null'], additionalProperties: storedText },
          },
        },
        response: created(responses(Ref(RunSchema), 400, 401, 403, 404, 409, 422)),
      },
    },
    async (request, reply) => {
      const { namespace, job } = request.params;
      const body = request.body;
      const jobRef = jobNamed(state, namespace, job);
      const id = body.id ?? randomUUID();
      if (!isUuid(id))
        throw new HeadwaterError('BAD_REQUEST', `body/id ${JSON.stringify(id)} is not a UUID.`);
      const uuid = id.toLowerCase();
      if ((await findRuns(db, [uuid])).length > 0) {
        throw new HeadwaterError(
          'CONFLICT',
          `Run '${uuid}' already exists. Change its state with POST /api/v1/jobs/runs/${uuid}/start (or complete, fail, abort).`,
        );
      }
      timeParam(body.nominalStartTime, 'body/nominalStartTime');
      timeParam(body.nominalEndTime, 'body/nominalEndTime');
      await ingest(
        request,
        legacyNewRunEvent(
          {
            id: uuid,
            job: { namespace, name: job },
            nominalStartTime: body.nominalStartTime,
            nominalEndTime: body.nominalEndTime,
            args: body.args,
            ...(await jobIo(jobRef.id)),
          },
          producer,
          new Date(),
        ),
      );
      const run = await runAnswer(uuid);
      return reply
        .status(201)
        .header('location', `${request.protocol}://${request.host}/api/v1/jobs/runs/${uuid}`)
        .send(run);
    },
  );

  for (const action of Object.keys(LEGACY_RUN_ACTIONS) as LegacyRunAction[]) {
    app.post<{ Params: { id: string }; Querystring: { at?: string } }>(
      `/api/v1/jobs/runs/:id/${action}`,
      {
        ...plainJson,
        config: write,
        schema: {
          tags: TAGS,
          summary: `Mark a run as ${{ start: 'RUNNING', complete: 'COMPLETED', fail: 'FAILED', abort: 'ABORTED' }[action]} (deprecated in Marquez)`,
          description:
            `${DEPRECATED} Sent as a ${LEGACY_RUN_ACTIONS[action]} RunEvent at \`at\` (now if absent) naming ` +
            "the job's current inputs and outputs. The state follows event time, as for any run.",
          params: { type: 'object', properties: { id: text }, required: ['id'] },
          querystring: {
            type: 'object',
            properties: { at: { type: 'string', description: 'When (ISO-8601); now if absent' } },
          },
          response: responses(Ref(RunSchema), 400, 401, 403, 404, 422),
        },
      },
      async (request) => {
        const at = timeParam(request.query.at, 'querystring/at') ?? new Date();
        const record = await runNamed(request.params.id);
        await ingest(
          request,
          legacyRunTransitionEvent(
            {
              id: record.uuid,
              job: { namespace: record.namespace, name: record.jobName },
              ...(await jobIo(record.jobId)),
            },
            action,
            producer,
            at,
          ),
        );
        return runAnswer(record.uuid);
      },
    );
  }
  done();
}
