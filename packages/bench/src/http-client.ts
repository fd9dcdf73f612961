import http from 'node:http';

/** A response as the benchmark needs it. */
export interface HttpResult {
  readonly status: number;
  readonly body: string;
}

/** A keep-alive HTTP/1.1 client for one server. */
export interface HttpClient {
  /** POSTs `body` as application/json. */
  post(path: string, body: string): Promise<HttpResult>;
  /** GETs `path` (with its query string). */
  get(path: string): Promise<HttpResult>;
  /** Closes the pooled sockets. */
  close(): void;
}

/** Options of {@link createHttpClient}. */
export interface HttpClientOptions {
  /** Sockets kept open to the server; one per concurrent client, so no request waits for a socket. */
  readonly maxSockets: number;
  /** A request that takes longer fails. @default 120000 */
  readonly timeoutMs?: number;
  /** Sent as `Authorization: Bearer <bearer>` when set. */
  readonly bearer?: string | undefined;
}

/**
 * node:http with a keep-alive agent: every concurrent client reuses its own connection, as a real OpenLineage
 * client does, so the benchmark measures requests and not TCP handshakes. (undici's Pool would do too, but Node 20
 * does not expose it without installing the package.)
 */
export function createHttpClient(baseUrl: string, options: HttpClientOptions): HttpClient {
  const url = new URL(baseUrl);
  const agent = new http.Agent({
    keepAlive: true,
    maxSockets: options.maxSockets,
    maxFreeSockets: options.maxSockets,
  });
  const timeoutMs = options.timeoutMs ?? 120_000;
  const send = (method: 'GET' | 'POST', path: string, body?: string): Promise<HttpResult> =>
    new Promise((resolve, reject) => {
      const headers: http.OutgoingHttpHeaders = {};
      if (options.bearer !== undefined) headers.authorization = `Bearer ${options.bearer}`;
      if (body !== undefined) {
        headers['content-type'] = 'application/json';
        headers['content-length'] = Buffer.byteLength(body);
      }
      const request = http.request(
        { agent, hostname: url.hostname, port: url.port, method, path, headers },
        (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('error', reject);
          response.on('end', () =>
            resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }),
          );
        },
      );
      request.setTimeout(timeoutMs, () =>
        request.destroy(new Error(`${method} ${path} took longer than ${timeoutMs} ms`)),
      );
      request.on('error', reject);
      request.end(body);
    });
  return {
    post: (path, body) => send('POST', path, body),
    get: (path) => send('GET', path),
    close: () => agent.destroy(),
  };
}
