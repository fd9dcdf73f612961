/** Request bodies that carry JSON: parsed before validation, and text the store can hold. */
import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import { HeadwaterError } from '../core/errors.js';

/** PostgreSQL text cannot hold U+0000: text the API stores must not contain it (a 400 instead of a 500). */
export const NO_NUL_PATTERN = '^[^\\u0000]*$';

/** Stored text, in a request body. */
export const storedText = { type: 'string', pattern: NO_NUL_PATTERN } as const;

/**
 * A preValidation hook that parses a JSON request body, so that the route's body schema validates the
 * object. The app keeps bodies as text (ingest stores events verbatim), so routes that take JSON use this.
 */
export function parseJsonBody(
  request: FastifyRequest,
  _reply: FastifyReply,
  done: HookHandlerDoneFunction,
): void {
  const { body } = request;
  // No body at all is an empty object: the body schema then names what is missing.
  if (body === undefined || body === null || (typeof body === 'string' && body.trim() === '')) {
    request.body = {};
    return done();
  }
  if (typeof body !== 'string') return done();
  try {
    request.body = JSON.parse(body) as unknown;
    done();
  } catch (error) {
    done(
      new HeadwaterError(
        'MALFORMED_JSON',
        `The request body is not valid JSON (${(error as Error).message}). Send a JSON object.`,
        { cause: error },
      ),
    );
  }
}
