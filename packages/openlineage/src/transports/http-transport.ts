import http from 'node:http';
import https from 'node:https';
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import type { OpenLineageEvent } from '../generated/model.js';
import type { BatchEmitResult, EmitResult, Transport } from './transport.js';
import { SUCCESS, toError } from './transport.js';

const gzipAsync = promisify(gzip);

/** Returns a bearer token; called before every request, so it can cache and refresh. */
export type TokenProvider = () => string | Promise<string>;

/**
 * How the transport authenticates.
 * - `api_key`: sends `Authorization: Bearer <apiKey>` (as the Python client's `api_key` provider);
 * - `bearer`: sends `Authorization: Bearer <token>`, the token fixed or from a {@link TokenProvider}.
 */
export type HttpAuth =
  | { readonly type: 'api_key'; readonly apiKey: string }
  | { readonly type: 'bearer'; readonly token: string | TokenProvider };

/** Options of {@link createHttpTransport}. */
export interface HttpTransportOptions {
  /** Base URL of the OpenLineage backend, e.g. `http://localhost:5000`. */
  readonly url: string;
  /**
   * Path of the lineage endpoint, joined to `url` with exactly one `/` (an absolute URL replaces `url`).
   * @default 'api/v1/lineage'
   */
  readonly endpoint?: string;
  /**
   * Send batches to the batch endpoint (`POST` of a JSON array, spec `OpenLineage.yml` `/lineage/batch`).
   * Only the async transport sends batches.
   * @default false
   */
  readonly batch?: boolean;
  /**
   * Path of the batch endpoint, joined like `endpoint`.
   * @default 'api/v1/lineage/batch'
   */
  readonly batchEndpoint?: string;
  /**
   * Time for a whole request (connect, send, response) before it is aborted and reported retryable.
   * @default 5000 (the Python client's `timeout` of 5 s)
   */
  readonly timeoutMs?: number;
  /** Authentication; none by default. */
  readonly auth?: HttpAuth;
  /** Extra headers, sent last so they can override the defaults (not `Content-Length`). */
  readonly headers?: Readonly<Record<string, string>>;
  /**
   * Body compression.
   * @default none
   */
  readonly compression?: 'gzip';
  /** Query parameters added to every request URL. */
  readonly urlParams?: Readonly<Record<string, string>>;
  /**
   * Reuse connections between requests.
   * @default true
   */
  readonly keepAlive?: boolean;
  /**
   * Most concurrent sockets to the backend.
   * @default 8
   */
  readonly maxSockets?: number;
}

/** The error of an HTTP response the transport did not accept, with its status and the start of its body. */
export class HttpTransportError extends Error {
  override readonly name = 'HttpTransportError';
  constructor(
    message: string,
    readonly statusCode: number | undefined,
    readonly responseBody: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

// 408/425/429 and 5xx say "later"; 501 (not implemented) and 505 (version) will not change with time.
const RETRYABLE_STATUS = new Set([408, 425, 429, 500, 502, 503, 504, 507, 508, 509, 510, 511, 598, 599]);
const MAX_RESPONSE_BYTES = 64 * 1024;

/** Joins a base URL and an endpoint with exactly one `/`; an absolute endpoint wins. */
export function joinUrl(base: string, endpoint: string, params?: Readonly<Record<string, string>>): URL {
  let url: URL;
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(endpoint)) url = new URL(endpoint);
  else url = new URL(`${base.replace(/\/+$/, '')}/${endpoint.replace(/^\/+/, '')}`);
  for (const [key, value] of Object.entries(params ?? {})) url.searchParams.set(key, value);
  return url;
}

/** Parses `Retry-After` (seconds or an HTTP date) into milliseconds from `nowMs`. */
export function parseRetryAfter(value: string | undefined, nowMs = Date.now()): number | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  const trimmed = value.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.round(Number(trimmed) * 1000);
  const date = Date.parse(trimmed);
  return Number.isNaN(date) ? undefined : Math.max(0, date - nowMs);
}

interface RawResponse {
  readonly statusCode: number;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: string;
}

/**
 * Creates a transport that POSTs each event as JSON to an OpenLineage backend (Headwater, Marquez...).
 * It makes one attempt per call and classifies the outcome; wrap it with {@link withRetry} for retries
 * (`createTransportFromConfig` does). Connections are kept alive; `close()` releases them.
 *
 * @example
 * ```ts
 * const transport = withRetry(
 *   createHttpTransport({ url: 'http://localhost:5000', auth: { type: 'api_key', apiKey: process.env.KEY! } }),
 * );
 * ```
 */
export function createHttpTransport(options: HttpTransportOptions): Transport {
  const timeoutMs = options.timeoutMs ?? 5000;
  if (!(timeoutMs > 0))
    throw new RangeError(`http transport: timeoutMs must be a positive number, got ${timeoutMs}`);
  let lineageUrl: URL;
  let batchUrl: URL;
  try {
    lineageUrl = joinUrl(options.url, options.endpoint ?? 'api/v1/lineage', options.urlParams);
    batchUrl = joinUrl(options.url, options.batchEndpoint ?? 'api/v1/lineage/batch', options.urlParams);
  } catch (cause) {
    throw new TypeError(
      `http transport: url "${options.url}" is not a valid URL; give an absolute http(s) URL`,
      {
        cause,
      },
    );
  }
  if (lineageUrl.protocol !== 'http:' && lineageUrl.protocol !== 'https:') {
    throw new TypeError(`http transport: url must start with http:// or https://, got "${options.url}"`);
  }
  const secure = lineageUrl.protocol === 'https:';
  const agentOptions = { keepAlive: options.keepAlive ?? true, maxSockets: options.maxSockets ?? 8 };
  const agent = secure ? new https.Agent(agentOptions) : new http.Agent(agentOptions);
  let closed = false;

  const authorization = async (): Promise<string | undefined> => {
    const auth = options.auth;
    if (auth === undefined) return undefined;
    if (auth.type === 'api_key') return `Bearer ${auth.apiKey}`;
    const token = typeof auth.token === 'string' ? auth.token : await auth.token();
    return `Bearer ${token}`;
  };

  const post = (url: URL, body: Buffer, headers: Record<string, string>): Promise<RawResponse> =>
    new Promise((resolve, reject) => {
      const request = (secure ? https : http).request(url, { method: 'POST', agent, headers }, (response) => {
        const chunks: Buffer[] = [];
        let size = 0;
        response.on('data', (chunk: Buffer) => {
          // Keep only the start of the body (for error messages) but read all of it, so the socket is reusable.
          if (size < MAX_RESPONSE_BYTES) chunks.push(chunk);
          size += chunk.length;
        });
        response.on('end', () => {
          clearTimeout(timer);
          resolve({
            statusCode: response.statusCode ?? 0,
            headers: response.headers,
            body: Buffer.concat(chunks).subarray(0, MAX_RESPONSE_BYTES).toString('utf8'),
          });
        });
        response.on('error', fail);
      });
      const timer = setTimeout(() => {
        request.destroy(new Error(`no response within ${timeoutMs} ms`));
      }, timeoutMs);
      function fail(error: Error): void {
        clearTimeout(timer);
        reject(error);
      }
      request.on('error', fail);
      request.end(body);
    });

  const send = async (url: URL, payload: unknown): Promise<RawResponse | EmitResult> => {
    if (closed) return { status: 'failure', error: new Error('http transport: emit after close()') };
    let body: Buffer;
    try {
      body = Buffer.from(JSON.stringify(payload), 'utf8');
      if (options.compression === 'gzip') body = await gzipAsync(body, { level: 3 });
    } catch (thrown) {
      const error = new Error(
        `http transport: the event could not be serialised: ${toError(thrown).message}`,
        {
          cause: thrown,
        },
      );
      return { status: 'failure', error };
    }
    const headers: Record<string, string> = {
      'Content-Type': 'application/json',
      Accept: 'application/json',
    };
    if (options.compression === 'gzip') headers['Content-Encoding'] = 'gzip';
    try {
      const auth = await authorization();
      if (auth !== undefined) headers.Authorization = auth;
    } catch (thrown) {
      const error = new Error(`http transport: the token provider failed: ${toError(thrown).message}`, {
        cause: thrown,
      });
      return { status: 'retryable', error };
    }
    Object.assign(headers, options.headers);
    headers['Content-Length'] = String(body.length);
    try {
      return await post(url, body, headers);
    } catch (thrown) {
      const cause = toError(thrown);
      const code = (cause as NodeJS.ErrnoException).code;
      const error = new HttpTransportError(
        `http transport: POST ${url.origin}${url.pathname} failed: ${code ?? cause.message}`,
        undefined,
        '',
        { cause },
      );
      return { status: 'retryable', error };
    }
  };

  const classify = (url: URL, response: RawResponse): EmitResult => {
    const { statusCode } = response;
    if (statusCode >= 200 && statusCode < 300) return SUCCESS;
    const snippet = response.body.slice(0, 500);
    const error = new HttpTransportError(
      `http transport: POST ${url.origin}${url.pathname} answered ${statusCode}${snippet ? `: ${snippet}` : ''}`,
      statusCode,
      response.body,
    );
    if (!RETRYABLE_STATUS.has(statusCode)) return { status: 'failure', error };
    const retryAfterMs = parseRetryAfter(response.headers['retry-after']);
    return retryAfterMs === undefined
      ? { status: 'retryable', error }
      : { status: 'retryable', error, retryAfterMs };
  };

  const transport: Transport = {
    async emit(event: OpenLineageEvent) {
      const response = await send(lineageUrl, event);
      return 'status' in response ? response : classify(lineageUrl, response);
    },
    async close() {
      closed = true;
      agent.destroy();
      return Promise.resolve(true);
    },
  };
  if (options.batch === true) {
    transport.emitBatch = async (events): Promise<BatchEmitResult> => {
      if (events.length === 0) return SUCCESS;
      const response = await send(batchUrl, events);
      if ('status' in response) return response;
      const result = classify(batchUrl, response);
      if (result.status !== 'success' || response.statusCode !== 200) return result;
      return batchOutcome(response.body, events.length);
    };
  }
  return transport;
}

/** Reads the 200 answer of `/lineage/batch`: `success`, or `partial_success` with `failed_events`. */
function batchOutcome(body: string, count: number): BatchEmitResult {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return SUCCESS; // a 200 without a JSON body is taken as "all received"
  }
  if (typeof parsed !== 'object' || parsed === null) return SUCCESS;
  const { status, failed_events: failedEvents } = parsed as { status?: unknown; failed_events?: unknown };
  if (status !== 'partial_success' || !Array.isArray(failedEvents)) return SUCCESS;
  const retryable: number[] = [];
  const failed: number[] = [];
  const reasons: string[] = [];
  for (const entry of failedEvents as { index?: unknown; retriable?: unknown; reason?: unknown }[]) {
    if (typeof entry.index !== 'number' || entry.index < 0 || entry.index >= count) continue;
    (entry.retriable === true ? retryable : failed).push(entry.index);
    if (typeof entry.reason === 'string' && reasons.length < 3)
      reasons.push(`#${entry.index}: ${entry.reason}`);
  }
  if (retryable.length === 0 && failed.length === 0) return SUCCESS;
  const error = new Error(
    `http transport: the batch endpoint rejected ${retryable.length + failed.length} of ${count} events` +
      (reasons.length > 0 ? ` (${reasons.join('; ')})` : ''),
  );
  return { status: 'partial', error, retryable, failed };
}
