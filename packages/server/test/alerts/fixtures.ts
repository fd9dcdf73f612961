import { newWebhookSecret, signatureValid as verifySignature } from '@headwater/test-support';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ParsedMail } from 'mailparser';
import { simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';
import { afterEach } from 'vitest';
import type { IncidentNotice, RecipientReason, TransitionKind } from '../../src/alerts/notice.js';
import type { SlackMessage } from '../../src/alerts/slack-message.js';

const financeOwnsOrders: RecipientReason = {
  kind: 'owns-impacted',
  owner: 'team:finance',
  node: { namespace: 'postgres://db:5432', name: 'finance.orders' },
  nodeType: 'dataset',
  depth: 1,
  columns: ['amount'],
};

/**
 * The demo's failure as a notice: `load_orders` failed; `orders` is its output, `dashboards.revenue` is five hops
 * down. Owners: team:finance (Slack and e-mail) owns `orders`; user:ann owns the dashboard.
 */
export function loadOrdersNotice(
  kind: TransitionKind = 'opened',
  overrides: Partial<IncidentNotice> = {},
): IncidentNotice {
  return {
    incidentId: 'inc-7f3a',
    signal: 'run_failed',
    openedAt: '2026-03-01T06:00:05.000Z',
    transition: {
      id: { opened: '1', updated: '2', acknowledged: '3', resolved: '4' }[kind],
      kind,
      at: {
        opened: '2026-03-01T06:00:05.000Z',
        updated: '2026-03-01T06:05:00.000Z',
        acknowledged: '2026-03-01T06:10:00.000Z',
        resolved: '2026-03-01T07:00:00.000Z',
      }[kind],
      ...(kind === 'acknowledged' ? { by: 'ann' } : {}),
      ...(kind === 'resolved' ? { note: 'The next run of demo/load_orders completed.' } : {}),
    },
    rootCause: {
      kind: 'job',
      job: { namespace: 'demo', name: 'load_orders' },
      runId: '0195f1c2-5b1e-7d3a-9c4e-2f1a0b9c8d7e',
      errorMessage:
        'psycopg2.errors.UndefinedColumn: column "amount" does not exist\nLINE 1: SELECT amount FROM raw.orders',
    },
    impacted: {
      datasets: [
        { namespace: 'postgres://db:5432', name: 'dashboards.revenue', depth: 5 },
        { namespace: 'postgres://db:5432', name: 'finance.orders', depth: 1, columns: ['amount'] },
      ],
      jobs: [{ namespace: 'demo', name: 'build_revenue', depth: 4 }],
    },
    recipients: [
      {
        address: { channel: 'finance-slack' },
        reasons: [financeOwnsOrders],
      },
      {
        address: { email: 'finance@example.com' },
        reasons: [financeOwnsOrders],
      },
      {
        address: { email: 'ann@example.com' },
        reasons: [
          {
            kind: 'owns-impacted',
            owner: 'user:ann',
            node: { namespace: 'postgres://db:5432', name: 'dashboards.revenue' },
            nodeType: 'dataset',
            depth: 5,
          },
        ],
      },
      { address: { channel: 'ops' }, reasons: [{ kind: 'rule', rule: 'everything' }] },
    ],
    ...overrides,
  };
}

/** A request as a test receiver saw it. */
export interface ReceivedRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: string;
}

/** What a scripted receiver answers to one request. */
export interface ScriptedAnswer {
  readonly status: number;
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: string;
}

/** An HTTP server on loopback that records requests and answers from a script (the last answer repeats). */
export interface Receiver {
  readonly url: string;
  readonly requests: ReceivedRequest[];
  close(): Promise<void>;
}

/**
 * Starts a receiver. `answer` may inspect the request (to check a signature, say) before choosing the answer;
 * a thrown error answers 599 with its message, so a failed check surfaces in the test's result.
 */
export async function startReceiver(
  answer: ScriptedAnswer[] | ((request: ReceivedRequest, index: number) => ScriptedAnswer | 'hang'),
): Promise<Receiver> {
  const requests: ReceivedRequest[] = [];
  const hanging = new Set<http.ServerResponse>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const request = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      const index = requests.length;
      requests.push(request);
      let chosen: ScriptedAnswer | 'hang';
      try {
        chosen = Array.isArray(answer)
          ? (answer[Math.min(index, answer.length - 1)] ?? { status: 200 })
          : answer(request, index);
      } catch (error) {
        chosen = { status: 599, body: (error as Error).message };
      }
      if (chosen === 'hang') {
        hanging.add(res);
        return;
      }
      res.writeHead(chosen.status, chosen.headers).end(chosen.body ?? '');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        for (const res of hanging) res.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A loopback port with nothing listening on it. */
export async function closedPort(): Promise<number> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** A new Standard Webhooks signing secret. */
export const newSecret = newWebhookSecret;

/** Whether a received request's Standard Webhooks signature verifies under `secret`, now. */
export const signatureValid = (secret: string, request: ReceivedRequest): boolean =>
  verifySignature(secret, request.headers, request.body, Math.floor(Date.now() / 1000));

/**
 * What Slack's incoming webhooks check before they answer `ok`, as their documentation states it: a JSON body
 * with `text`, and blocks of known types within their limits; otherwise 400 `invalid_blocks`.
 */
export function slackShaped(request: ReceivedRequest): ScriptedAnswer {
  if (request.headers['content-type'] !== 'application/json') return { status: 400, body: 'invalid_payload' };
  const body = JSON.parse(request.body) as SlackMessage;
  if (typeof body.text !== 'string' || body.text === '') return { status: 400, body: 'no_text' };
  if (!Array.isArray(body.blocks) || body.blocks.length > 50) return { status: 400, body: 'invalid_blocks' };
  for (const block of body.blocks) {
    if (block.type === 'header') {
      if (block.text.type !== 'plain_text' || block.text.text.length > 150)
        return { status: 400, body: 'invalid_blocks' };
    } else if (block.type === 'section') {
      if (block.text.text.length > 3000) return { status: 400, body: 'invalid_blocks' };
    } else if (block.type === 'context') {
      if (block.elements.length === 0 || block.elements.length > 10)
        return { status: 400, body: 'invalid_blocks' };
    } else if (block.type === 'actions') {
      for (const element of block.elements)
        if (!/^https?:\/\//.test(element.url)) return { status: 400, body: 'invalid_blocks' };
    } else return { status: 400, body: 'invalid_blocks' };
  }
  return { status: 200, body: 'ok' };
}

export interface Received {
  readonly mail: ParsedMail;
  readonly envelopeTo: string[];
  readonly user: string | undefined;
}

/** A real SMTP server on loopback that checks a login, may refuse recipients, and parses what it accepts. */
export async function startSmtp(options: { refuse?: Readonly<Record<string, number>> } = {}) {
  const received: Received[] = [];
  const logins: string[] = [];
  const server = new SMTPServer({
    logger: false,
    // No TLS on loopback: STARTTLS off, so that the login goes over the plain connection.
    disabledCommands: ['STARTTLS'],
    allowInsecureAuth: true,
    onAuth(auth, _session, callback) {
      logins.push(`${auth.username}:${auth.password}`);
      if (auth.username === 'alerts' && auth.password === 'smtp-secret')
        callback(null, { user: auth.username });
      else callback(Object.assign(new Error('Invalid username or password'), { responseCode: 535 }));
    },
    onRcptTo(address, _session, callback) {
      const code = options.refuse?.[address.address];
      if (code === undefined) callback();
      else
        callback(
          Object.assign(new Error(`${code === 550 ? 'No such mailbox' : 'Try again later'}`), {
            responseCode: code,
          }),
        );
    },
    onData(stream, session, callback) {
      simpleParser(stream)
        .then((mail) => {
          received.push({
            mail,
            envelopeTo: session.envelope.rcptTo.map((to) => to.address),
            user: session.user as string | undefined,
          });
          callback();
        })
        .catch((error: Error) => callback(error));
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;
  const close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  smtpServers.push(close);
  return { port, received, logins, close };
}

const smtpServers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(smtpServers.splice(0).map((close) => close()));
});
