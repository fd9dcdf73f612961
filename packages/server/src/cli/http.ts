/**
 * What the client-side commands (`demo`, `ingest`) share: where their output goes, how they name the server, and
 * how they talk to its HTTP API. They use the public API only, never the store, so they work against any
 * Headwater (or Marquez-compatible batch) server, local or remote.
 */
import { backoffDelayMs, type BackoffPolicy } from '../core/backoff.js';

/** Where a command writes. Tests pass their own; the CLI passes the process's streams. */
export interface CommandIo {
  readonly stdout: OutputStream;
  readonly stderr: OutputStream;
  /** Environment variables (HEADWATER_URL). */
  readonly env: NodeJS.ProcessEnv;
}

/** The part of a writable stream the commands use. */
export interface OutputStream {
  write(text: string): unknown;
  /** True when a person is watching: progress bars are drawn only then. */
  readonly isTTY?: boolean;
  /** Terminal width, when known. */
  readonly columns?: number;
}

/** The process's own streams and environment. */
export const processIo: CommandIo = { stdout: process.stdout, stderr: process.stderr, env: process.env };

/** The server the client commands talk to when neither --url nor HEADWATER_URL says otherwise. */
export const DEFAULT_SERVER_URL = 'http://127.0.0.1:5000';

/** How long one request may take before the command gives up on it. */
const REQUEST_TIMEOUT_MS = 120_000;

/**
 * An error a command reports as one line on stderr, then exits with `exitCode`: 2 for a usage error (a bad
 * flag, a missing file), 1 for anything else (server unreachable, server errors).
 */
export class CliError extends Error {
  readonly exitCode: 1 | 2;

  constructor(message: string, exitCode: 1 | 2 = 1, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'CliError';
    this.exitCode = exitCode;
  }
}

/**
 * The server base URL: the --url flag, else HEADWATER_URL, else {@link DEFAULT_SERVER_URL}; without a trailing
 * slash. Throws a usage CliError when it is not an http(s) URL.
 *
 * @example
 * resolveServerUrl('http://localhost:5000/', {}); // 'http://localhost:5000'
 */
export function resolveServerUrl(flag: string | undefined, env: NodeJS.ProcessEnv): string {
  const source = flag !== undefined ? '--url' : env.HEADWATER_URL ? 'HEADWATER_URL' : undefined;
  const text = flag ?? (env.HEADWATER_URL || DEFAULT_SERVER_URL);
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    url = new URL('invalid:');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new CliError(
      `${source ?? 'the server URL'} must be an http:// or https:// URL such as ${DEFAULT_SERVER_URL}; got ${JSON.stringify(text)}.`,
      2,
    );
  }
  return url.toString().replace(/\/+$/, '');
}

/** The network error code behind a failed fetch (ECONNREFUSED, ENOTFOUND...), if there is one. */
function networkCode(error: unknown): string | undefined {
  // undici wraps the socket error in `cause`; a host with several addresses gives an AggregateError of them.
  const cause = (error as { cause?: unknown }).cause as { code?: unknown; errors?: { code?: unknown }[] };
  const code = cause?.code ?? cause?.errors?.[0]?.code;
  return typeof code === 'string' ? code : undefined;
}

/**
 * fetch() with a timeout, turning "could not connect" into a CliError that says what to do. Responses of any
 * status are returned; the caller decides what an error status means. HEADWATER_API_KEY (or
 * OPENLINEAGE_API_KEY, as the OpenLineage clients read it), when set, is sent as the bearer credential.
 */
export async function request(url: string, init: RequestInit = {}): Promise<Response> {
  const key = process.env.HEADWATER_API_KEY || process.env.OPENLINEAGE_API_KEY;
  const headers = new Headers(init.headers);
  if (key && !headers.has('authorization')) headers.set('authorization', `Bearer ${key}`);
  try {
    return await fetch(url, { ...init, headers, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
  } catch (error) {
    const origin = new URL(url).origin;
    if (error instanceof DOMException && error.name === 'TimeoutError') {
      throw new CliError(
        `the Headwater server at ${origin} did not answer within ${REQUEST_TIMEOUT_MS / 1000} s.`,
        1,
        {
          cause: error,
        },
      );
    }
    const code = networkCode(error);
    throw new CliError(
      `cannot reach a Headwater server at ${origin}${code ? ` (${code})` : ''}: start one with \`headwater serve\`, ` +
        'or point --url (or HEADWATER_URL) at a running one.',
      1,
      { cause: error },
    );
  }
}

/** The message of an error response: the server's `message` (and `errors`) when it sent its JSON error format. */
export async function errorMessageOf(response: Response): Promise<string> {
  const text = await response.text();
  let detail = text.trim().slice(0, 500);
  try {
    const body = JSON.parse(text) as { message?: unknown; errors?: unknown };
    if (typeof body.message === 'string') {
      detail = body.message;
      if (Array.isArray(body.errors) && body.errors.length > 0) detail += ` ${body.errors.join('; ')}`;
    }
  } catch {
    // Not the server's JSON error format (a proxy's HTML page, say): the start of the text says enough.
  }
  return `HTTP ${response.status}${detail ? `: ${detail}` : ''}`;
}

/** The reply of POST /api/v1/lineage/batch. */
export interface BatchResponse {
  readonly status: 'success' | 'partial_success';
  readonly summary: {
    readonly received: number;
    readonly successful: number;
    readonly failed: number;
    readonly retriable: number;
    readonly non_retriable: number;
  };
  /** `index` is the event's position in the request. */
  readonly failed_events: readonly {
    readonly index: number;
    readonly reason: string;
    readonly retriable: boolean;
  }[];
}

/** What became of one batch request. */
export type BatchOutcome =
  | { readonly kind: 'accepted'; readonly response: BatchResponse }
  /** 413: the body or the event count is over the server's limit; send fewer events at once. */
  | { readonly kind: 'too-large'; readonly message: string }
  /** 404 or 405: the server has no batch endpoint (Marquez); send the events one by one. */
  | { readonly kind: 'no-batch-endpoint' }
  /** Any other error status, after retries for 503. */
  | { readonly kind: 'rejected'; readonly message: string };

/** Retries of a request the server answered 503 (shutting down, store unavailable), and the waits before them. */
const RETRIES_OF_503 = 3;
const BACKOFF_OF_503: Required<BackoffPolicy> = { baseDelayMs: 500, maxDelayMs: 2_000 };

/**
 * Waits before retry `attempt` of a 503. The timer holds the process (unlike core/backoff.ts's `sleep`): a
 * command waiting for its answer has nothing else keeping it alive.
 */
const waitBefore503Retry = (attempt: number): Promise<void> =>
  new Promise((resolve) => setTimeout(resolve, backoffDelayMs(attempt, BACKOFF_OF_503)));

/**
 * Sends events (each one line of JSON text) to POST /api/v1/lineage/batch as NDJSON. NDJSON lets the caller
 * pass event text through unchanged, and the server reports failures by position, which the caller maps back to
 * where each event came from. Retries a 503 a few times; throws a CliError only when the server cannot be
 * reached.
 */
export async function postBatch(baseUrl: string, lines: readonly string[]): Promise<BatchOutcome> {
  for (let attempt = 0; ; attempt++) {
    const response = await request(`${baseUrl}/api/v1/lineage/batch`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-ndjson' },
      body: lines.join('\n'),
    });
    if (response.ok) {
      let body: Partial<BatchResponse> | undefined;
      try {
        body = (await response.json()) as Partial<BatchResponse>;
      } catch {
        // Not JSON: reported below like any answer without a batch summary.
      }
      if (!body?.summary || !Array.isArray(body.failed_events)) {
        return {
          kind: 'rejected',
          message: `HTTP ${response.status} without a batch summary: is ${baseUrl} a Headwater server?`,
        };
      }
      return { kind: 'accepted', response: body as BatchResponse };
    }
    if (response.status === 404 || response.status === 405) {
      await response.body?.cancel();
      return { kind: 'no-batch-endpoint' };
    }
    const message = await errorMessageOf(response);
    if (response.status === 413) return { kind: 'too-large', message };
    if (response.status !== 503 || attempt >= RETRIES_OF_503) return { kind: 'rejected', message };
    await waitBefore503Retry(attempt + 1);
  }
}

/**
 * Sends one event to POST /api/v1/lineage, the endpoint every OpenLineage server has. Retries a 503 a few
 * times. Returns undefined when the server took it, else why not.
 */
async function postEvent(baseUrl: string, line: string): Promise<string | undefined> {
  for (let attempt = 0; ; attempt++) {
    const response = await request(`${baseUrl}/api/v1/lineage`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: line,
    });
    if (response.ok) {
      await response.body?.cancel();
      return undefined;
    }
    const message = await errorMessageOf(response);
    if (response.status !== 503 || attempt >= RETRIES_OF_503) return message;
    await waitBefore503Retry(attempt + 1);
  }
}

/** Servers found to have no batch endpoint: later requests to them go one event at a time at once. */
const withoutBatchEndpoint = new Set<string>();

/** Sends events one request each, in order (the fallback for servers without a batch endpoint). */
async function sendOneByOne(baseUrl: string, lines: readonly string[]): Promise<SendResult> {
  let successful = 0;
  const failures: { index: number; reason: string }[] = [];
  for (const [index, line] of lines.entries()) {
    const reason = await postEvent(baseUrl, line);
    if (reason === undefined) successful++;
    else failures.push({ index, reason });
  }
  return { successful, failures };
}

/** The result of {@link sendEvents}: how many the server accepted, and why the others failed. */
export interface SendResult {
  readonly successful: number;
  /** `index` is the event's position in the `lines` passed to {@link sendEvents}. */
  readonly failures: readonly { readonly index: number; readonly reason: string }[];
}

/**
 * Sends events through the batch endpoint, halving any request the server finds too large (body size or event
 * count, which are its configuration, not ours) until it fits. A server without a batch endpoint (404 or 405,
 * as Marquez answers) gets the events one POST /api/v1/lineage each, from then on. Throws a CliError when the server cannot be
 * reached or rejects a request as a whole: continuing would only repeat the error for every later batch.
 */
export async function sendEvents(baseUrl: string, lines: readonly string[]): Promise<SendResult> {
  if (withoutBatchEndpoint.has(baseUrl)) return sendOneByOne(baseUrl, lines);
  const outcome = await postBatch(baseUrl, lines);
  switch (outcome.kind) {
    case 'no-batch-endpoint':
      withoutBatchEndpoint.add(baseUrl);
      return sendOneByOne(baseUrl, lines);
    case 'accepted':
      return {
        successful: outcome.response.summary.successful,
        failures: outcome.response.failed_events.map(({ index, reason }) => ({ index, reason })),
      };
    case 'too-large': {
      if (lines.length === 1) {
        return {
          successful: 0,
          failures: [{ index: 0, reason: `the event is too large for the server (${outcome.message})` }],
        };
      }
      const half = Math.ceil(lines.length / 2);
      const first = await sendEvents(baseUrl, lines.slice(0, half));
      const second = await sendEvents(baseUrl, lines.slice(half));
      return {
        successful: first.successful + second.successful,
        failures: [...first.failures, ...second.failures.map((f) => ({ ...f, index: f.index + half }))],
      };
    }
    case 'rejected':
      throw new CliError(
        `the server at ${baseUrl} refused a batch of ${lines.length} events: ${outcome.message}`,
      );
  }
}

/**
 * How many events the server holds (GET /api/v1/events/lineage totalCount, every kind), or undefined if it
 * cannot say. (Marquez ignores `kind` and counts every kind anyway.)
 */
export async function storedEventCount(baseUrl: string): Promise<number | undefined> {
  const response = await request(`${baseUrl}/api/v1/events/lineage?limit=0&kind=run&kind=dataset&kind=job`);
  if (!response.ok) {
    await response.body?.cancel();
    return undefined;
  }
  const body = (await response.json()) as { totalCount?: unknown };
  return typeof body.totalCount === 'number' ? body.totalCount : undefined;
}

/** `1234567` -> `1,234,567`, for summaries people read. */
export const formatCount = (n: number): string => n.toLocaleString('en-US');
