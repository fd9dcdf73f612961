/**
 * One error class for the whole server. Each error has a stable `code` from the registry below and the HTTP
 * status it maps to; only the HTTP layer (src/api) turns an error into a response.
 */
export const errorCodes = {
  MALFORMED_JSON: 400,
  BAD_REQUEST: 400,
  INVALID_NODE_ID: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  TOO_MANY_REQUESTS: 429,
  NOT_FOUND: 404,
  CONFLICT: 409,
  HISTORY_EXPIRED: 410,
  UNSUPPORTED_MEDIA_TYPE: 415,
  BODY_TOO_LARGE: 413,
  INVALID_EVENT: 422,
  INVALID_CONFIG: 500,
  STORE_UNAVAILABLE: 503,
  SHUTTING_DOWN: 503,
  OVERLOADED: 503,
  INTERNAL: 500,
} as const;

/** A stable machine-readable error code. */
export type ErrorCode = keyof typeof errorCodes;

/** Options of {@link HeadwaterError}. */
export interface HeadwaterErrorOptions {
  /** The underlying error, if any. */
  readonly cause?: unknown;
  /** Per-item details, e.g. one line per JSON path that failed validation. */
  readonly details?: readonly string[];
  /** For an error that passes (503, 429): when to try again, sent as Retry-After. */
  readonly retryAfterSeconds?: number;
}

/** An error that knows its code and HTTP status. Messages say what was wrong, where, and what to do. */
export class HeadwaterError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly details: readonly string[] | undefined;
  readonly retryAfterSeconds: number | undefined;

  constructor(code: ErrorCode, message: string, options: HeadwaterErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'HeadwaterError';
    this.code = code;
    this.status = errorCodes[code];
    this.details = options.details;
    this.retryAfterSeconds = options.retryAfterSeconds;
  }

  /** Whether the same request may succeed later (the store came back, the server restarted). */
  get retriable(): boolean {
    return this.status === 503 || this.status === 429;
  }
}

/** Returns `error` as a HeadwaterError, wrapping anything else as INTERNAL. */
export function asHeadwaterError(error: unknown): HeadwaterError {
  if (error instanceof HeadwaterError) return error;
  return new HeadwaterError('INTERNAL', 'Internal error; see the server log for details.', { cause: error });
}
