import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { HeadwaterError } from '../errors.js';
import type { Replication } from './replication.js';

/** Request headers not passed on: those of the connection, not the request, and those the follower answers for. */
const HOP_HEADERS = new Set([
  'connection',
  'keep-alive',
  'host',
  'content-length',
  'transfer-encoding',
  'upgrade',
  'te',
  'trailer',
  'proxy-connection',
  'expect',
  // The follower has checked Origin against its own Host (src/security/plugin.ts) before forwarding; the writer,
  // reached under its advertised address, would take the page's origin for a cross-site one.
  'origin',
  // Replaced by this request's id, so that the follower's and the writer's log lines about it share one id.
  'x-request-id',
]);

/** Response headers not passed back: fetch has decoded the body and will frame it again. */
const DROPPED_RESPONSE_HEADERS = new Set([
  'content-length',
  'content-encoding',
  'transfer-encoding',
  'connection',
  'keep-alive',
]);

/** How long a follower waits for the writer's answer before answering 503 itself. */
const FORWARD_TIMEOUT_MS = 60_000;

/**
 * Makes a follower take every request a load balancer sends it: reads are answered here, from the read side;
 * writes (any method but GET, HEAD and OPTIONS under /api/) are forwarded as they came, body and credentials
 * included, to the writer, whose answer is passed back. Nothing is acknowledged that the writer did not commit.
 * Without a known, reachable writer (during a takeover) the answer is 503 with Retry-After, which the
 * OpenLineage clients retry.
 *
 * Written here rather than with a proxy plugin: only one class of request is forwarded, to a target that
 * changes with the role, and the answer must be 503 (not 502) when the target is away.
 */
export function forwardWritesToWriter(app: FastifyInstance, replication: Replication): void {
  app.addHook('onRequest', async (request, reply) => {
    if (replication.role !== 'follower') return;
    if (request.method === 'GET' || request.method === 'HEAD' || request.method === 'OPTIONS') return;
    if (!request.url.startsWith('/api/')) return;
    return forward(request, reply, replication);
  });
}

async function forward(
  request: FastifyRequest,
  reply: FastifyReply,
  replication: Replication,
): Promise<FastifyReply> {
  const writer = replication.writerUrl;
  if (writer === undefined) {
    replication.nudge();
    throw noWriter('no server holds the writer lock right now');
  }
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers)) {
    if (value === undefined || HOP_HEADERS.has(name)) continue;
    for (const one of Array.isArray(value) ? value : [value]) headers.append(name, one);
  }
  headers.append('x-forwarded-for', request.ip);
  headers.set('x-request-id', request.id);
  const hasBody =
    request.headers['content-length'] !== '0' && request.headers['content-length'] !== undefined
      ? true
      : request.headers['transfer-encoding'] !== undefined;
  // Node's fetch needs `duplex` to stream a request body; the DOM types of RequestInit lack it.
  const init: RequestInit & { duplex: 'half' } = {
    method: request.method,
    headers,
    duplex: 'half',
    redirect: 'manual',
    signal: AbortSignal.timeout(FORWARD_TIMEOUT_MS),
  };
  if (hasBody) init.body = Readable.toWeb(request.raw) as ReadableStream<Uint8Array>;
  let response: Response;
  try {
    response = await fetch(new URL(request.url, writer), init);
  } catch (error) {
    replication.nudge();
    throw noWriter(`the writer at ${writer} did not answer (${(error as Error).message})`, error);
  }
  const body = Buffer.from(await response.arrayBuffer());
  reply.code(response.status);
  response.headers.forEach((value, name) => {
    if (!DROPPED_RESPONSE_HEADERS.has(name)) void reply.header(name, value);
  });
  return reply.send(body);
}

function noWriter(reason: string, cause?: unknown): HeadwaterError {
  return new HeadwaterError(
    'STORE_UNAVAILABLE',
    `This server follows another that writes, and ${reason}; retry shortly.`,
    { retryAfterSeconds: 1, cause },
  );
}
