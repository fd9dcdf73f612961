/**
 * A tiny local HTTP server standing in for an OpenLineage backend in transport tests. Each request is
 * answered by the next scripted reply (or 200 once the script is used up) and recorded with its decoded body.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';

export interface RecordedRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: http.IncomingHttpHeaders;
  /** The body, gunzipped when needed and JSON-parsed. */
  readonly body: unknown;
}

/** One scripted reply: a status (with optional headers and body), or `hang` to never answer. */
export type Reply = { status: number; headers?: Record<string, string>; body?: string } | 'hang';

export interface LineageServer {
  readonly url: string;
  readonly port: number;
  readonly requests: RecordedRequest[];
  /** Number of TCP connections accepted. */
  readonly connections: () => number;
  /** Queues replies for the next requests. */
  reply(...replies: Reply[]): void;
  close(): Promise<void>;
}

export async function startLineageServer(port = 0): Promise<LineageServer> {
  const requests: RecordedRequest[] = [];
  const script: Reply[] = [];
  const hanging: http.ServerResponse[] = [];
  let connections = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      let raw = Buffer.concat(chunks);
      if (req.headers['content-encoding'] === 'gzip') raw = gunzipSync(raw);
      requests.push({
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: raw.length > 0 ? (JSON.parse(raw.toString('utf8')) as unknown) : undefined,
      });
      const reply = script.shift() ?? { status: 200 };
      if (reply === 'hang') {
        hanging.push(res);
        return;
      }
      res.writeHead(reply.status, reply.headers);
      res.end(reply.body ?? '');
    });
  });
  server.on('connection', () => connections++);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  const actualPort = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${actualPort}`,
    port: actualPort,
    requests,
    connections: () => connections,
    reply: (...replies) => void script.push(...replies),
    close: () =>
      new Promise<void>((resolve) => {
        for (const res of hanging) res.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A port with nothing listening on it (a server is started and closed to find one). */
export async function closedPort(): Promise<number> {
  const server = await startLineageServer();
  await server.close();
  return server.port;
}
