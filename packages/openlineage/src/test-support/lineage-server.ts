/**
 * A tiny local HTTP server standing in for an OpenLineage backend in transport tests. Each request is
 * answered by the next scripted reply (or 200 once the script is used up) and recorded with its decoded body;
 * while held, the answers wait until released.
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
  /**
   * Holds the answers to requests from now on until the returned function is called, which sends those held and
   * ends the hold: a request is then in flight for as long as the test wants.
   */
  hold(): () => void;
  /** Resolves once `count` requests in all have been received (their bodies read). */
  received(count: number): Promise<void>;
  close(): Promise<void>;
}

export async function startLineageServer(port = 0): Promise<LineageServer> {
  const requests: RecordedRequest[] = [];
  const script: Reply[] = [];
  const hanging: http.ServerResponse[] = [];
  let held: (() => void)[] | undefined;
  const waiting: { count: number; resolve: () => void }[] = [];
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
      for (const waiter of waiting.filter((w) => requests.length >= w.count)) {
        waiting.splice(waiting.indexOf(waiter), 1);
        waiter.resolve();
      }
      const reply = script.shift() ?? { status: 200 };
      if (reply === 'hang') {
        hanging.push(res);
        return;
      }
      const answer = () => {
        res.writeHead(reply.status, reply.headers);
        res.end(reply.body ?? '');
      };
      if (held === undefined) answer();
      else held.push(answer);
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
    hold: () => {
      const answers: (() => void)[] = [];
      held = answers;
      return () => {
        if (held === answers) held = undefined;
        for (const answer of answers.splice(0)) answer();
      };
    },
    received: (count) =>
      requests.length >= count
        ? Promise.resolve()
        : new Promise<void>((resolve) => waiting.push({ count, resolve })),
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
