import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { HeadwaterError } from '../core/errors.js';
import type { CheckedEvent, EventOutcome, IncomingEvent, IngestFrontDoor } from '../accept/front-door.js';
import type { ReplicaCredential } from '../security/replica-credential.js';
import { previewOfUrl } from '../model/previews.js';
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
 * writes (any method but GET, HEAD and OPTIONS under /api/) and reads of a preview (`?preview=`) are forwarded as they came, body and credentials
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
    if (!request.url.startsWith('/api/')) return;
    // A preview's reads too (its diff, `?preview=`): its store is open on the writer only (src/servers/previews.ts).
    const read = request.method === 'GET' || request.method === 'HEAD' || request.method === 'OPTIONS';
    if (read && !request.url.startsWith('/api/v1/previews') && previewOfUrl(request.url) === undefined)
      return;
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

/** Most bytes of event text a follower forwards in one batch request (the writer's body limit is 10 MiB by default). */
const MAX_FORWARD_BYTES = 4 * 1024 * 1024;

/** What the batch endpoint answers (src/api/ingest-routes.ts). */
interface BatchAnswer {
  readonly summary: object;
  readonly failed_events?: readonly { index: number; reason: string; retriable: boolean }[];
}

/**
 * The batch endpoint's verdict on each event, when `text` is one: a 200, or a 503 listing the retriable events.
 * Anything else (an error body) says nothing of single events, and reading it as "none failed" would lose them.
 */
function batchAnswer(status: number, text: string): BatchAnswer | undefined {
  if (status !== 200 && status !== 503) return undefined;
  try {
    const parsed = JSON.parse(text) as Partial<BatchAnswer> | null;
    return typeof parsed?.summary === 'object' && parsed.summary !== null
      ? (parsed as BatchAnswer)
      : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The front door of a source that is not HTTP (Kafka ingest) on a server that may be a replica: on the writer its
 * own front door; on a follower the writer's batch endpoint, so that every replica can consume (each a member of the
 * consumer group) while one writes. An event counts as stored only once the writer acknowledged it; without a
 * reachable writer, or when the writer refuses the request as a whole, every event is 'unavailable' and is sent
 * again (a consumer pauses meanwhile). The writer's verdict on each event (invalid, retriable) is passed on as is.
 * The batches carry the store's replica credential: there is no caller's to pass on, and the writer needs one
 * once auth is on.
 */
export function replicaFrontDoor(
  replication: Replication,
  local: Pick<IngestFrontDoor, 'submit'>,
  credential: ReplicaCredential,
  log: { warn(object: object, message: string): void },
): Pick<IngestFrontDoor, 'submit'> {
  return {
    submit(incoming) {
      return replication.role === 'follower'
        ? submitToWriter(replication, incoming, credential, log)
        : local.submit(incoming);
    },
  };
}

async function submitToWriter(
  replication: Replication,
  incoming: readonly (IncomingEvent | CheckedEvent)[],
  credential: ReplicaCredential,
  log: { warn(object: object, message: string): void },
): Promise<EventOutcome[]> {
  const outcomes: EventOutcome[] = [];
  const chunks: { index: number; text: string }[][] = [[]];
  let bytes = 0;
  incoming.forEach((item, index) => {
    if ('ok' in item && !item.ok) {
      outcomes[index] = item.outcome;
      return;
    }
    const text = 'ok' in item ? item.event.body : (item.text ?? JSON.stringify(item.value));
    if (bytes + text.length > MAX_FORWARD_BYTES && chunks.at(-1)!.length > 0) {
      chunks.push([]);
      bytes = 0;
    }
    chunks.at(-1)!.push({ index, text });
    bytes += text.length;
  });
  for (const chunk of chunks) {
    if (chunk.length === 0) continue;
    const away = (reason: string): EventOutcome => ({
      status: 'unavailable',
      reason: `This server follows another that writes, and ${reason}; sent again shortly.`,
      retryAfterSeconds: 1,
    });
    const writer = replication.writerUrl;
    /** The writer's answer, or why there is none (every event of the chunk then waits). */
    let verdict: { answer: BatchAnswer } | { away: EventOutcome };
    if (writer === undefined) {
      replication.nudge();
      verdict = { away: away('no server holds the writer lock right now') };
    } else {
      try {
        const response = await fetch(new URL('/api/v1/lineage/batch', writer), {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: await credential.header() },
          body: `[${chunk.map(({ text }) => text).join(',')}]`,
          signal: AbortSignal.timeout(FORWARD_TIMEOUT_MS),
        });
        const text = await response.text();
        const answer = batchAnswer(response.status, text);
        if (answer !== undefined) verdict = { answer };
        else {
          // 401/403 (the writer wants credentials), 413, a 503 of a writer shutting down: the request, not an
          // event, was refused.
          log.warn(
            { writer, status: response.status, body: text.slice(0, 300) },
            'the writer refused events forwarded from Kafka',
          );
          verdict = {
            away: away(`the writer at ${writer} answered HTTP ${response.status} to forwarded events`),
          };
        }
      } catch (error) {
        replication.nudge();
        verdict = { away: away(`the writer at ${writer} did not answer (${(error as Error).message})`) };
      }
    }
    if ('away' in verdict) {
      for (const { index } of chunk) outcomes[index] = verdict.away;
      continue;
    }
    const failed = new Map((verdict.answer.failed_events ?? []).map((event) => [event.index, event]));
    chunk.forEach(({ index }, position) => {
      const refused = failed.get(position);
      outcomes[index] =
        refused === undefined
          ? { status: 'stored' }
          : refused.retriable
            ? { status: 'unavailable', reason: refused.reason, retryAfterSeconds: 1 }
            : { status: 'invalid', reason: refused.reason, issues: [refused.reason] };
    });
  }
  return outcomes;
}
