import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import fastifyPlugin from 'fastify-plugin';
import { HeadwaterError } from '../core/errors.js';
import type { CheckedEvent, EventOutcome, IncomingEvent, IngestFrontDoor } from '../accept/front-door.js';
import { unwritableNamespaces, type Principal } from '../security/access.js';

/**
 * What the ingest routes need: a front door (the server's, or the proxy's spool) and the batch limit. Where the
 * security layer runs (the server), each request's principal must be allowed to write what it sends, and a
 * refusal is reported to the front door's observers (metrics) when it has them.
 */
export interface IngestRouteDeps {
  readonly frontDoor: Pick<IngestFrontDoor, 'submit'> & Partial<Pick<IngestFrontDoor, 'report'>>;
  readonly config: { readonly maxBatchEvents: number };
}

function parseJson(text: string, where: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new HeadwaterError(
      'MALFORMED_JSON',
      `${where} is not valid JSON (${(error as Error).message}). Send one OpenLineage event as a JSON object.`,
      { cause: error },
    );
  }
}

/** A line of an NDJSON batch: the parsed event and its text, which is stored as sent. */
class Line {
  constructor(
    readonly value: unknown,
    readonly text: string,
  ) {}
}

/** Splits a batch body into events: a JSON array, or NDJSON (one event per line). */
function batchItems(text: string, contentType: string | undefined): unknown[] {
  const trimmed = text.trimStart();
  if (!contentType?.includes('ndjson') && !contentType?.includes('jsonl') && trimmed.startsWith('[')) {
    const parsed = parseJson(text, 'The batch body');
    if (!Array.isArray(parsed))
      throw new HeadwaterError('BAD_REQUEST', 'A batch must be a JSON array of events.');
    return parsed;
  }
  if (trimmed.startsWith('{') || contentType?.includes('ndjson') || contentType?.includes('jsonl')) {
    return text
      .split('\n')
      .map((line, index) => ({ line: line.trim(), index }))
      .filter(({ line }) => line.length > 0)
      .map(({ line, index }) => {
        try {
          return new Line(JSON.parse(line) as unknown, line);
        } catch (error) {
          return new LineError(index + 1, (error as Error).message);
        }
      });
  }
  throw new HeadwaterError(
    'BAD_REQUEST',
    'A batch must be a JSON array of events, or NDJSON (one event per line, Content-Type application/x-ndjson).',
  );
}

class LineError {
  constructor(
    readonly line: number,
    readonly message: string,
  ) {}
}

const batchResponseSchema = {
  type: 'object',
  properties: {
    status: { type: 'string', enum: ['success', 'partial_success', 'failure'] },
    summary: {
      type: 'object',
      properties: {
        received: { type: 'integer' },
        successful: { type: 'integer' },
        failed: { type: 'integer' },
        retriable: { type: 'integer' },
        non_retriable: { type: 'integer' },
      },
    },
    failed_events: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          index: { type: 'integer' },
          reason: { type: 'string' },
          retriable: { type: 'boolean' },
        },
      },
    },
  },
} as const;

const errorSchema = {
  type: 'object',
  properties: {
    code: { type: 'integer' },
    error: { type: 'string' },
    message: { type: 'string' },
    errors: { type: 'array', items: { type: 'string' } },
  },
} as const;

/** The HTTP answer for an event that was not stored (the outcomes that are not 'stored' or 'duplicate'). */
export function outcomeError(outcome: EventOutcome): HeadwaterError | undefined {
  switch (outcome.status) {
    case 'invalid':
      return new HeadwaterError('INVALID_EVENT', 'The event is not a valid OpenLineage event.', {
        details: outcome.issues,
      });
    case 'unavailable':
      return new HeadwaterError('STORE_UNAVAILABLE', outcome.reason, {
        retryAfterSeconds: outcome.retryAfterSeconds,
      });
    case 'failed':
      return new HeadwaterError('INTERNAL', 'Internal error; see the server log for details.', {
        cause: outcome.error,
      });
    default:
      return undefined;
  }
}

/** What the ingest routes' OpenAPI descriptions say about strict mode (README, "Strict mode"). */
const STRICT_NOTE =
  'Lenient by default, like Marquez. A server started with --strict (= --strict structure) also rejects, with ' +
  '422, what breaks the official OpenLineage 2-0-2 core and standard facet schemas (bundled): required fields, ' +
  'types, enums; --strict formats also asserts the date-time, uuid and uri formats.';

/** POST /api/v1/lineage and /api/v1/lineage/batch: the HTTP doors of the one ingest path. */
export const ingestRoutes = fastifyPlugin<IngestRouteDeps>(registerIngestRoutes, { name: 'ingest-routes' });

function registerIngestRoutes(
  app: FastifyInstance,
  deps: IngestRouteDeps,
  done: (error?: Error) => void,
): void {
  const { frontDoor } = deps;

  app.post(
    '/api/v1/lineage',
    {
      schema: {
        tags: ['OpenLineage'],
        summary: 'Send one OpenLineage event (RunEvent, DatasetEvent or JobEvent)',
        description:
          'Answers 201 with an empty body once the event and the lineage derived from it are committed. ' +
          'An identical event sent again is stored once. 422 lists what is wrong (including the limits in the ' +
          'README); 503 with Retry-After means the store is away and nothing was stored: send it again. ' +
          STRICT_NOTE,
        body: { type: 'object', description: 'An OpenLineage 2-0-2 event', additionalProperties: true },
        response: {
          201: { type: 'null', description: 'Stored' },
          400: errorSchema,
          413: errorSchema,
          415: errorSchema,
          422: errorSchema,
          503: errorSchema,
        },
      },
      // The body stays raw text; the validator below does the real work with precise JSON paths.
      validatorCompiler: () => () => true,
    },
    async (request, reply) => {
      const body = request.body;
      if (typeof body !== 'string')
        throw new HeadwaterError('MALFORMED_JSON', 'Send one OpenLineage event as JSON.');
      // The request text is what is stored and served: exactly what the producer sent, with no second
      // serialisation (the costliest step of ingest after parsing).
      const value = parseJson(body, 'The request body');
      const forbidden = forbiddenReason(request.principal, value);
      if (forbidden !== undefined) {
        frontDoor.report?.([value], [{ status: 'forbidden' }]);
        throw new HeadwaterError('FORBIDDEN', forbidden);
      }
      const [outcome] = await frontDoor.submit([{ value, text: body }]);
      const error = outcomeError(outcome!);
      if (error) {
        if (outcome!.status === 'invalid') logRejected(request.log, value, outcome!.reason);
        throw error;
      }
      return reply.status(201).send();
    },
  );

  app.post(
    '/api/v1/lineage/batch',
    {
      schema: {
        tags: ['OpenLineage'],
        summary: 'Send many OpenLineage events at once (JSON array or NDJSON)',
        description:
          'Valid events are committed together; invalid ones are reported by index in failed_events ' +
          '(partial success). Duplicates count as successful and are stored once. When the store is away the ' +
          'answer is 503 with Retry-After and the same reply, its events counted as retriable. ' +
          STRICT_NOTE,
        body: { type: 'array', items: { type: 'object' } },
        response: {
          200: batchResponseSchema,
          400: errorSchema,
          413: errorSchema,
          415: errorSchema,
          503: batchResponseSchema,
        },
      },
      validatorCompiler: () => () => true,
    },
    async (request, reply) => {
      if (typeof request.body !== 'string')
        throw new HeadwaterError('BAD_REQUEST', 'Send a JSON array of events.');
      const items = batchItems(request.body, request.headers['content-type']);
      if (items.length > deps.config.maxBatchEvents) {
        throw new HeadwaterError(
          'BODY_TOO_LARGE',
          `The batch has ${items.length} events; at most ${deps.config.maxBatchEvents} are taken at once (--max-batch-events).`,
        );
      }
      const incoming: (IncomingEvent | CheckedEvent)[] = items.map((entry) => {
        if (entry instanceof LineError) {
          const reason = `line ${entry.line} is not valid JSON: ${entry.message}`;
          return { ok: false, outcome: { status: 'invalid', reason, issues: [reason] } };
        }
        const value: unknown = entry instanceof Line ? entry.value : entry;
        const forbidden = forbiddenReason(request.principal, value);
        if (forbidden !== undefined)
          return { ok: false, outcome: { status: 'invalid', reason: forbidden, issues: [forbidden] } };
        return entry instanceof Line ? { value: entry.value, text: entry.text } : { value: entry };
      });
      const outcomes = await frontDoor.submit(incoming);
      const failed: { index: number; reason: string; retriable: boolean }[] = [];
      let retryAfterSeconds: number | undefined;
      outcomes.forEach((outcome, index) => {
        if (outcome.status === 'stored' || outcome.status === 'duplicate') return;
        if (outcome.status === 'unavailable') retryAfterSeconds = outcome.retryAfterSeconds;
        if (outcome.status === 'invalid') {
          const entry = items[index];
          logRejected(request.log, entry instanceof Line ? entry.value : entry, outcome.reason, index);
        }
        if (outcome.status === 'failed') request.log.error({ err: outcome.error, index }, 'event not stored');
        failed.push({ index, reason: outcome.reason, retriable: outcome.status === 'unavailable' });
      });
      const retriable = failed.filter((event) => event.retriable).length;
      const answer = {
        status:
          failed.length === 0 ? 'success' : failed.length === items.length ? 'failure' : 'partial_success',
        summary: {
          received: items.length,
          successful: items.length - failed.length,
          failed: failed.length,
          retriable,
          non_retriable: failed.length - retriable,
        },
        failed_events: failed,
      };
      if (retryAfterSeconds !== undefined) {
        return reply.status(503).header('retry-after', String(retryAfterSeconds)).send(answer);
      }
      return answer;
    },
  );
  done();
}

/** Why the caller may not send `value`, or undefined when they may (see README, "Security"). */
export function forbiddenReason(principal: Principal | undefined, value: unknown): string | undefined {
  // Undefined where the security layer does not run (the proxy has no principals).
  if (principal === undefined) return undefined;
  const denied = unwritableNamespaces(principal, value);
  if (denied.length === 0) return undefined;
  return (
    `forbidden: writing this event needs the writer role over every namespace it names; the caller ` +
    `(${principal.name}) lacks it over ${denied.map((namespace) => JSON.stringify(namespace)).join(', ')}`
  );
}

/** A rejected event leaves a trace at the default log level (warn): why, who sent it, which job, where. */
function logRejected(log: FastifyBaseLogger, value: unknown, reason: string, index?: number): void {
  const event = (typeof value === 'object' && value !== null ? value : {}) as Record<string, unknown>;
  const job = (typeof event.job === 'object' && event.job !== null ? event.job : {}) as Record<
    string,
    unknown
  >;
  const short = (text: unknown) => (typeof text === 'string' ? text.slice(0, 200) : undefined);
  log.warn(
    {
      reason: reason.slice(0, 2000),
      producer: short(event.producer),
      namespace: short(job.namespace),
      job: short(job.name),
      ...(index === undefined ? {} : { index }),
    },
    'event rejected',
  );
}
