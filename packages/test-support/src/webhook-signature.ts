/**
 * Standard Webhooks signatures as a receiver checks them, written from the specification with node:crypto and
 * apart from the server's sender (which signs with the `standardwebhooks` package): the server's tests and the
 * benchmark both verify what the server sends with it.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type http from 'node:http';

/** A new random signing secret in the `whsec_` form the alerts configuration takes. */
export const newWebhookSecret = (): string => `whsec_${randomBytes(32).toString('base64')}`;

/** How far a `webhook-timestamp` may be from now: the specification's suggested 5 minutes. */
const TOLERANCE_SECONDS = 300;

/**
 * Whether a request's Standard Webhooks headers sign `body` under `secret`: one of the space-separated `v1,`
 * signatures must match, and the timestamp must be within 5 minutes of `nowSeconds`.
 */
export function signatureValid(
  secret: string,
  headers: http.IncomingHttpHeaders,
  body: string,
  nowSeconds: number,
): boolean {
  const id = headers['webhook-id'];
  const timestamp = headers['webhook-timestamp'];
  const signatures = headers['webhook-signature'];
  if (typeof id !== 'string' || typeof timestamp !== 'string' || typeof signatures !== 'string') return false;
  if (!/^\d+$/.test(timestamp) || Math.abs(nowSeconds - Number(timestamp)) > TOLERANCE_SECONDS) return false;
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const expected = createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest();
  return signatures.split(' ').some((entry) => {
    const [version, signature] = entry.split(',', 2);
    if (version !== 'v1' || signature === undefined) return false;
    const given = Buffer.from(signature, 'base64');
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}
