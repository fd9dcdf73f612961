/**
 * A webhook receiver on loopback for the alerts benchmark: it checks each request's Standard Webhooks signature
 * (HMAC-SHA256 of `id.timestamp.body` under the channel's `whsec_` secret, `v1,` and base64 in
 * `webhook-signature`) as a real receiver would, records when it arrived, and answers 200 (401 to a bad
 * signature, which the server then gives up).
 */
import { newWebhookSecret, signatureValid } from '@headwater/test-support';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** One verified delivery. */
export interface ReceivedWebhook {
  /** performance.now() when its body had arrived. */
  readonly atMs: number;
  /** The `webhook-id` header: the same on every attempt of one transition. */
  readonly id: string;
  /** `incident.opened`, `incident.updated`, ... */
  readonly type: string;
  readonly incidentId: string | undefined;
  /** The root cause's run (`data.rootCause.runId`). */
  readonly runId: string | undefined;
  /** The parsed body. */
  readonly payload: unknown;
}

/** A running receiver. */
export interface WebhookReceiver {
  readonly url: string;
  /** The secret the server signs with (`whsec_` and base64). */
  readonly secret: string;
  /** Verified deliveries, in arrival order. */
  readonly received: readonly ReceivedWebhook[];
  /** Requests whose signature did not verify (or that were not JSON). */
  readonly rejected: number;
  /** Calls `listener` with each verified delivery as it arrives. */
  onDelivery(listener: (delivery: ReceivedWebhook) => void): void;
  close(): Promise<void>;
}

/** Starts a receiver on 127.0.0.1 with a fresh secret. */
export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const secret = newWebhookSecret();
  const received: ReceivedWebhook[] = [];
  const listeners: ((delivery: ReceivedWebhook) => void)[] = [];
  let rejected = 0;
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const atMs = performance.now();
      const body = Buffer.concat(chunks).toString('utf8');
      let payload: {
        type?: unknown;
        data?: { incident?: { id?: unknown }; rootCause?: { runId?: unknown } };
      };
      try {
        if (!signatureValid(secret, request.headers, body, Math.floor(Date.now() / 1000)))
          throw new Error('bad signature');
        payload = JSON.parse(body) as typeof payload;
      } catch {
        rejected++;
        response.writeHead(401).end();
        return;
      }
      const delivery: ReceivedWebhook = {
        atMs,
        id: String(request.headers['webhook-id']),
        type: String(payload.type),
        incidentId: typeof payload.data?.incident?.id === 'string' ? payload.data.incident.id : undefined,
        runId: typeof payload.data?.rootCause?.runId === 'string' ? payload.data.rootCause.runId : undefined,
        payload,
      };
      received.push(delivery);
      for (const listener of listeners) listener(delivery);
      response.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    });
  });
  // Deliveries come over keep-alive connections from the server's sender: close them with the server.
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks/headwater`,
    secret,
    received,
    get rejected() {
      return rejected;
    },
    onDelivery: (listener) => listeners.push(listener),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
