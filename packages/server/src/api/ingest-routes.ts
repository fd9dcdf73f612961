import type { FastifyInstance } from 'fastify';
import { HeadwaterError } from '../errors.js';
import { normalizeEvent, type NormalizedEvent } from '../ingest/normalize.js';
import type { ValidationIssue } from '../ingest/validate.js';
import type { AppDeps } from './app.js';

const formatIssues = (issues: readonly ValidationIssue[]) =>
  issues.map((issue) => `${issue.path}: ${issue.message}`);

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
    status: { type: 'string', enum: ['success', 'partial_success'] },
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

/** POST /api/v1/lineage and /api/v1/lineage/batch: the HTTP doors of the one ingest path. */
export function registerIngestRoutes(app: FastifyInstance, deps: AppDeps): void {
  const { validator, pipeline } = deps;

  app.post(
    '/api/v1/lineage',
    {
      schema: {
        tags: ['OpenLineage'],
        summary: 'Send one OpenLineage event (RunEvent, DatasetEvent or JobEvent)',
        description:
          'Answers 201 with an empty body once the event and the lineage derived from it are committed. ' +
          'An identical event sent again is stored once.',
        body: { type: 'object', description: 'An OpenLineage 2-0-2 event', additionalProperties: true },
        response: {
          201: { type: 'null', description: 'Stored' },
          400: errorSchema,
          413: errorSchema,
          415: errorSchema,
          422: errorSchema,
        },
      },
      // The body stays raw text; the validator below does the real work with precise JSON paths.
      validatorCompiler: () => () => true,
    },
    async (request, reply) => {
      const body = request.body;
      if (typeof body !== 'string')
        throw new HeadwaterError('MALFORMED_JSON', 'Send one OpenLineage event as JSON.');
      const event = parseJson(body, 'The request body');
      const result = validator.validate(event);
      if (!result.ok) {
        throw new HeadwaterError('INVALID_EVENT', 'The event is not a valid OpenLineage event.', {
          details: formatIssues(result.issues),
        });
      }
      // The request text is what is stored and served: exactly what the producer sent, with no second
      // serialisation (the costliest step of ingest after parsing).
      await pipeline.submit([normalizeEvent(event as Record<string, unknown>, result.kind, body)]);
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
          '(partial success). Duplicates count as successful and are stored once.',
        body: { type: 'array', items: { type: 'object' } },
        response: { 200: batchResponseSchema, 400: errorSchema, 413: errorSchema, 415: errorSchema },
      },
      validatorCompiler: () => () => true,
    },
    async (request) => {
      if (typeof request.body !== 'string')
        throw new HeadwaterError('BAD_REQUEST', 'Send a JSON array of events.');
      const items = batchItems(request.body, request.headers['content-type']);
      if (items.length > deps.config.maxBatchEvents) {
        throw new HeadwaterError(
          'BODY_TOO_LARGE',
          `The batch has ${items.length} events; at most ${deps.config.maxBatchEvents} are taken at once (--max-batch-events).`,
        );
      }
      const failed: { index: number; reason: string; retriable: boolean }[] = [];
      const accepted: NormalizedEvent[] = [];
      items.forEach((entry, index) => {
        if (entry instanceof LineError) {
          failed.push({
            index,
            reason: `line ${entry.line} is not valid JSON: ${entry.message}`,
            retriable: false,
          });
          return;
        }
        const item = entry instanceof Line ? entry.value : entry;
        const result = validator.validate(item);
        if (!result.ok) {
          failed.push({ index, reason: formatIssues(result.issues).join('; '), retriable: false });
          return;
        }
        const event = item as Record<string, unknown>;
        accepted.push(
          entry instanceof Line
            ? normalizeEvent(event, result.kind, entry.text)
            : normalizeEvent(event, result.kind),
        );
      });
      await pipeline.submit(accepted);
      return {
        status: failed.length === 0 ? 'success' : 'partial_success',
        summary: {
          received: items.length,
          successful: accepted.length,
          failed: failed.length,
          retriable: 0,
          non_retriable: failed.length,
        },
        failed_events: failed,
      };
    },
  );
}
