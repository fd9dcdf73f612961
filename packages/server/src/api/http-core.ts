import type { IncomingMessage } from 'node:http';
import type { Transform } from 'node:stream';
import { createGunzip, createInflate } from 'node:zlib';
import type { FastifyError, FastifyInstance } from 'fastify';
import fastifyPlugin from 'fastify-plugin';
import { HeadwaterError, asHeadwaterError } from '../core/errors.js';
import { isStoreUnavailable, type StoreHealth } from '../store/availability.js';
import { NO_NUL_PATTERN } from './json-body.js';

/** What the HTTP core needs: the body limit (for its message) and, where there is a store, its health. */
export interface HttpCoreDeps {
  readonly config: { readonly maxBodyBytes: number };
  readonly health?: Pick<StoreHealth, 'markDown' | 'unavailableError'>;
}

const fastifyErrorCodes: Record<string, HeadwaterError['code']> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'UNSUPPORTED_MEDIA_TYPE',
  FST_ERR_CTP_BODY_TOO_LARGE: 'BODY_TOO_LARGE',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'MALFORMED_JSON',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'BAD_REQUEST',
  FST_ERR_VALIDATION: 'BAD_REQUEST',
};

/**
 * The HTTP layer every Headwater process shares (the server and the proxy): bodies kept as text (JSON, NDJSON,
 * gzip or deflate), the one error format, and the 404 answer.
 */
export const httpCore = fastifyPlugin<HttpCoreDeps>(registerHttpCore, { name: 'http-core' });

function registerHttpCore(app: FastifyInstance, deps: HttpCoreDeps, done: (error?: Error) => void): void {
  // Ingest keeps the body as text: it is parsed once, validated, and stored as the event's JSON text.
  app.removeAllContentTypeParsers();
  for (const type of [
    'application/json',
    'application/x-ndjson',
    'application/ndjson',
    'application/jsonl',
  ]) {
    app.addContentTypeParser(type, { parseAs: 'string' }, (_request, body, done) => done(null, body));
  }
  app.addHook('preParsing', (request, _reply, payload, done) => {
    const encoding = request.headers['content-encoding'];
    if (encoding === undefined || encoding === 'identity') return done(null, payload);
    if (encoding === 'gzip' || encoding === 'deflate') {
      const inflated = payload.pipe(encoding === 'gzip' ? createGunzip() : createInflate()) as Transform & {
        receivedEncodedLength?: number;
      };
      // Fastify checks Content-Length against the bytes received on the wire, which it learns from here.
      inflated.receivedEncodedLength = 0;
      payload.on('data', (chunk: Buffer) => {
        inflated.receivedEncodedLength! += chunk.length;
      });
      return done(null, inflated);
    }
    done(
      new HeadwaterError(
        'UNSUPPORTED_MEDIA_TYPE',
        `Content-Encoding ${encoding} is not supported; use gzip.`,
      ),
    );
  });

  app.setErrorHandler((rawError: FastifyError | HeadwaterError | Error, request, reply) => {
    let error: HeadwaterError;
    const fastifyCode = 'code' in rawError && typeof rawError.code === 'string' ? rawError.code : undefined;
    if (rawError instanceof HeadwaterError) error = rawError;
    else if (fastifyCode !== undefined && fastifyErrorCodes[fastifyCode] !== undefined) {
      error = new HeadwaterError(
        fastifyErrorCodes[fastifyCode],
        describeFastifyError(fastifyCode, rawError, deps.config.maxBodyBytes),
        {
          cause: rawError,
        },
      );
    } else if (
      'statusCode' in rawError &&
      typeof rawError.statusCode === 'number' &&
      rawError.statusCode < 500
    ) {
      error = new HeadwaterError('BAD_REQUEST', rawError.message, { cause: rawError });
    } else if (deps.health && isStoreUnavailable(rawError)) {
      deps.health.markDown(rawError);
      error = deps.health.unavailableError(rawError);
      request.log.warn({ err: rawError }, 'store unavailable');
    } else {
      error = asHeadwaterError(rawError);
      request.log.error({ err: rawError }, 'request failed');
    }
    const body: Record<string, unknown> = { code: error.status, error: error.code, message: error.message };
    if (error.details) body.errors = error.details;
    if (error.retryAfterSeconds !== undefined)
      void reply.header('retry-after', String(error.retryAfterSeconds));
    else if (error.status === 503) void reply.header('retry-after', '1');
    const send = () => void reply.status(error.status).send(body);
    // A client still sending a body too large (Node's fetch, the TypeScript client) takes an answer as a broken
    // pipe when the socket closes under its writes, and would retry the event for ever: the rest of the body is
    // read and dropped first, up to a bound, so that it reads the 413.
    if (error.code === 'BODY_TOO_LARGE' && !request.raw.complete) {
      return discardBody(request.raw, Math.max(MIN_DISCARD_BYTES, deps.config.maxBodyBytes)).then((whole) => {
        if (!whole) void reply.header('connection', 'close');
        send();
      });
    }
    send();
    return undefined;
  });

  app.setNotFoundHandler((request, reply) => {
    void reply.status(404).send({
      code: 404,
      error: 'NOT_FOUND',
      message: `No route ${request.method} ${request.url.split('?')[0]}; see /api/v1/openapi.json.`,
    });
  });
  done();
}

/** A body too large is read and dropped up to at least this many bytes more (see {@link discardBody}). */
const MIN_DISCARD_BYTES = 64 * 1024 * 1024;
/** ... and for at most this long. */
const DISCARD_MS = 10_000;

/**
 * Reads the rest of a request's body and drops it: true once it has all been read, false when it goes on past
 * `maxBytes` or DISCARD_MS, or the request fails (the answer then closes the connection instead).
 */
function discardBody(raw: IncomingMessage, maxBytes: number): Promise<boolean> {
  if (raw.complete) return Promise.resolve(true);
  return new Promise((resolve) => {
    let bytes = 0;
    const finish = (whole: boolean) => {
      clearTimeout(timer);
      raw.off('data', onData).off('end', onEnd).off('error', onFailure).off('close', onFailure);
      if (!whole) raw.pause();
      resolve(whole);
    };
    const onData = (chunk: Buffer) => {
      bytes += chunk.length;
      if (bytes > maxBytes) finish(false);
    };
    const onEnd = () => finish(true);
    const onFailure = () => finish(raw.complete);
    const timer = setTimeout(() => finish(false), DISCARD_MS);
    // A decompression stream (see preParsing) is given no more of it.
    raw.unpipe();
    raw.on('data', onData).once('end', onEnd).once('error', onFailure).once('close', onFailure);
    raw.resume();
  });
}

function describeFastifyError(code: string, error: Error, maxBodyBytes: number): string {
  switch (code) {
    case 'FST_ERR_VALIDATION':
      return describeValidation(error);
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return 'Unsupported Content-Type: send OpenLineage events as application/json (or application/x-ndjson to the batch endpoint).';
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return `The request body is larger than ${maxBodyBytes} bytes (--max-body-bytes); split it into smaller batches.`;
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return 'The request body is empty; send an OpenLineage event as JSON.';
    default:
      return error.message;
  }
}

/** A validation error, with the accepted values of an enum and the bounds of a number spelled out. */
function describeValidation(error: Error): string {
  const { validation, validationContext } = error as FastifyError;
  if (!validation || validation.length === 0) return error.message;
  return validation
    .map((issue) => {
      const where = `${validationContext ?? 'request'}${issue.instancePath}`;
      const params = issue.params;
      let text = `${where} ${issue.message ?? 'is invalid'}`;
      if (issue.keyword === 'enum' && Array.isArray(params.allowedValues))
        text += `: ${(params.allowedValues as unknown[]).join(', ')}`;
      if (issue.keyword === 'pattern' && params.pattern === NO_NUL_PATTERN)
        text = `${where} must not contain a NUL character (\\u0000)`;
      return text;
    })
    .join(', ');
}
