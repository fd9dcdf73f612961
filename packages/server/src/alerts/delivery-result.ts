/**
 * What one delivery attempt came to, for every channel alike, and the HTTP POST that the webhook and Slack
 * channels share. Senders never throw: they return a {@link DeliveryResult}, and retrying is the caller's
 * (`deliverWithRetry`, or the outbox worker across restarts), as in the client package's transports.
 *
 * HTTP outcomes: 2xx delivered; 410 gone (the receiver says the endpoint is no more: Standard Webhooks and Slack
 * both use it, and the channel is to be disabled); 408, 425, 429 and 5xx retry, honouring `Retry-After`; network
 * errors and timeouts retry; other statuses, redirects included (a webhook is not followed elsewhere), fail.
 */
import { parseRetryAfter } from '@headwater/openlineage';

/** The outcome of one delivery attempt. */
export type DeliveryResult =
  | { readonly status: 'delivered'; readonly statusCode?: number; readonly detail?: string }
  | {
      readonly status: 'retry';
      readonly error: Error;
      readonly statusCode?: number;
      /** How long the receiver asked to wait (`Retry-After`). */
      readonly retryAfterMs?: number;
    }
  | { readonly status: 'gone'; readonly error: Error; readonly statusCode: number }
  | { readonly status: 'failed'; readonly error: Error; readonly statusCode?: number };

/** Options every HTTP sender takes. */
export interface HttpSenderOptions {
  /**
   * How long one attempt may take, from connecting to the end of the response's headers.
   * @default 10000
   */
  readonly timeoutMs?: number;
  /** The fetch to use (a proxy's, or one with another dispatcher). @default globalThis.fetch */
  readonly fetch?: typeof fetch;
}

/** Per-send options: cancellation and the clock. */
export interface SendOptions {
  /** Aborts the attempt; the result is then `retry`, as nothing says it arrived. */
  readonly signal?: AbortSignal;
  /** The clock, in epoch milliseconds, for timestamps and `Retry-After` dates. @default Date.now */
  readonly now?: () => number;
}

const RETRY_STATUSES = new Set([408, 425, 429]);
const SNIPPET_BYTES = 512;

/**
 * The result of an HTTP answer: see the module comment.
 * @param headers The answer's headers (`Retry-After` and `Location` are read).
 * @param describe What was sent and what came back, the start of the error's message.
 */
export function classifyHttpStatus(
  statusCode: number,
  headers: Headers,
  describe: string,
  nowMs: number = Date.now(),
): DeliveryResult {
  if (statusCode >= 200 && statusCode < 300) return { status: 'delivered', statusCode };
  if (statusCode === 410)
    return {
      status: 'gone',
      statusCode,
      error: new Error(
        `${describe}. The receiver says this endpoint is gone: disable the channel until its URL is fixed.`,
      ),
    };
  if (statusCode >= 500 || RETRY_STATUSES.has(statusCode)) {
    const error = new Error(`${describe}; it will be tried again.`);
    const retryAfterMs = parseRetryAfter(headers.get('retry-after') ?? undefined, nowMs);
    return retryAfterMs === undefined
      ? { status: 'retry', error, statusCode }
      : { status: 'retry', error, statusCode, retryAfterMs };
  }
  const advice =
    statusCode >= 300 && statusCode < 400
      ? `Redirects are not followed; configure the URL it redirects to (${headers.get('location') ?? 'no Location given'}).`
      : 'The receiver refused the message, which will not be sent again; check the channel configuration.';
  return { status: 'failed', statusCode, error: new Error(`${describe}. ${advice}`) };
}

/** A URL as it may appear in a message or a log: its origin only, since a Slack URL's path is its secret. */
export const safeUrl = (url: string): string => {
  try {
    return `${new URL(url).origin}/…`;
  } catch {
    return '(an unparsable URL)';
  }
};

/**
 * POSTs one body and classifies the answer; never throws.
 * @param what The channel, for messages, e.g. `webhook channel ops`.
 */
export async function postForDelivery(
  what: string,
  url: string,
  body: string,
  headers: Readonly<Record<string, string>>,
  options: HttpSenderOptions & SendOptions,
): Promise<DeliveryResult> {
  const timeoutMs = options.timeoutMs ?? 10_000;
  const now = options.now ?? Date.now;
  const timeout = AbortSignal.timeout(timeoutMs);
  const signal = options.signal === undefined ? timeout : AbortSignal.any([timeout, options.signal]);
  const target = `${what}: POST ${safeUrl(url)}`;
  let response: Response;
  try {
    response = await (options.fetch ?? fetch)(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'user-agent': 'headwater-alerts', ...headers },
      body,
      redirect: 'manual',
      signal,
    });
  } catch (cause) {
    const reason = timeout.aborted
      ? `timed out after ${timeoutMs} ms`
      : options.signal?.aborted
        ? 'was cancelled'
        : `failed: ${networkReason(cause)}`;
    return { status: 'retry', error: new Error(`${target} ${reason}; it will be tried again.`, { cause }) };
  }
  if (response.ok) {
    // The body is not needed, but must be consumed or cancelled for the connection to be reused or released.
    await response.body?.cancel().catch(() => undefined);
    return { status: 'delivered', statusCode: response.status };
  }
  const snippet = await readSnippet(response);
  const answered = `${target} answered ${response.status}${snippet === '' ? '' : `: ${snippet}`}`;
  return classifyHttpStatus(response.status, response.headers, answered, now());
}

function networkReason(cause: unknown): string {
  const inner = cause instanceof Error && cause.cause instanceof Error ? cause.cause : cause;
  if (inner instanceof Error) {
    const code = (inner as { code?: unknown }).code;
    return typeof code === 'string' ? `${code} ${inner.message}` : inner.message;
  }
  return String(inner);
}

async function readSnippet(response: Response): Promise<string> {
  const reader: ReadableStreamDefaultReader<Uint8Array> | undefined = response.body?.getReader();
  if (reader === undefined) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    while (size < SNIPPET_BYTES) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      size += value.byteLength;
    }
  } catch {
    // A body cut short still leaves its status to classify.
  } finally {
    await reader.cancel().catch(() => undefined);
  }
  const text = Buffer.concat(chunks).toString('utf8', 0, Math.min(size, SNIPPET_BYTES));
  return text.replace(/\s+/g, ' ').trim().slice(0, 200);
}
