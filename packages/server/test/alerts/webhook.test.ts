import { Webhook } from 'standardwebhooks';
import { afterEach, describe, expect, it } from 'vitest';
import type { WebhookChannel } from '../../src/alerts/config.js';
import { deliverWithRetry } from '../../src/alerts/deliver.js';
import { renderWebhookMessage, webhookPayload } from '../../src/alerts/webhook-message.js';
import { createWebhookSender } from '../../src/alerts/webhook-sender.js';
import type { Receiver, ReceivedRequest, ScriptedAnswer } from './fixtures.js';
import { closedPort, loadOrdersNotice, newSecret, signatureValid, startReceiver } from './fixtures.js';

const receivers: Receiver[] = [];
afterEach(async () => {
  await Promise.all(receivers.splice(0).map((receiver) => receiver.close()));
});
async function receiver(answer: Parameters<typeof startReceiver>[0]): Promise<Receiver> {
  const started = await startReceiver(answer);
  receivers.push(started);
  return started;
}

const channel = (url: string, secret = newSecret()): WebhookChannel => ({
  type: 'webhook',
  name: 'ops',
  url,
  secret,
});
const fast = { baseDelayMs: 5, maxDelayMs: 20 };

/** A receiver as a consumer would write one: the library's verifier, then the script's answer. */
function verifying(secret: string, script: ScriptedAnswer[]) {
  return (request: ReceivedRequest, index: number): ScriptedAnswer => {
    new Webhook(secret).verify(request.body, request.headers as Record<string, string>);
    if (!signatureValid(secret, request)) throw new Error('independent signature check failed');
    return script[Math.min(index, script.length - 1)]!;
  };
}

describe('signed webhook delivery', () => {
  it('reaches a receiver answering 500, 500, 200 on the third attempt, with one webhook-id and a valid signature each time', async () => {
    const secret = newSecret();
    const hook = await receiver(
      verifying(secret, [{ status: 500 }, { status: 500, body: 'still broken' }, { status: 200 }]),
    );
    const notice = loadOrdersNotice();
    const message = renderWebhookMessage(notice, 'https://lineage.example.com');
    const sender = createWebhookSender(channel(hook.url, secret));
    const attempts: string[] = [];

    const report = await deliverWithRetry((_, options) => sender.send(message, options), fast, {
      onAttempt: ({ attempt, result }) => attempts.push(`${attempt}:${result.status}`),
    });

    expect(report.result).toEqual({ status: 'delivered', statusCode: 200 });
    expect(report.attempts).toBe(3);
    expect(attempts).toEqual(['1:retry', '2:retry', '3:delivered']);
    expect(hook.requests.map((request) => request.headers['webhook-id'])).toEqual([
      message.id,
      message.id,
      message.id,
    ]);
    expect(message.id).toBe('hw_inc-7f3a.1');
    for (const request of hook.requests) {
      expect(request.method).toBe('POST');
      expect(request.headers['content-type']).toBe('application/json');
      expect(signatureValid(secret, request)).toBe(true);
      // The bytes signed are the bytes rendered, on every attempt.
      expect(request.body).toBe(message.body);
    }
    expect(JSON.parse(hook.requests[2]!.body)).toEqual(webhookPayload(notice, 'https://lineage.example.com'));
  });

  it('is rejected by a verifier holding another secret, so the receiver above could have failed', async () => {
    const hook = await receiver(verifying(newSecret(), [{ status: 200 }]));
    const result = await createWebhookSender(channel(hook.url)).send(
      renderWebhookMessage(loadOrdersNotice()),
    );
    expect(result.status).toBe('retry');
    expect(result.status === 'retry' && result.error.message).toMatch(
      /answered 599: No matching signature found/,
    );
    expect(signatureValid(newSecret(), hook.requests[0]!)).toBe(false);
  });

  it('classifies 410 as gone, at once, without retrying', async () => {
    const hook = await receiver([{ status: 410, body: 'endpoint removed' }]);
    const sender = createWebhookSender(channel(hook.url));
    const report = await deliverWithRetry(
      (_, options) => sender.send(renderWebhookMessage(loadOrdersNotice()), options),
      fast,
    );
    expect(report.result.status).toBe('gone');
    expect(report.result.status === 'gone' && report.result.error.message).toMatch(
      /^webhook channel ops: POST http:\/\/127\.0\.0\.1:\d+\/… answered 410: endpoint removed\. .*disable the channel/,
    );
    expect(report.attempts).toBe(1);
    expect(hook.requests).toHaveLength(1);
  });

  it('fails other 4xx and redirects at once, saying why', async () => {
    const hook = await receiver([
      { status: 400, body: '{"error":"bad payload"}' },
      { status: 302, headers: { location: 'https://elsewhere.example.com/x' } },
    ]);
    const sender = createWebhookSender(channel(hook.url));
    const message = renderWebhookMessage(loadOrdersNotice());
    const refused = await sender.send(message);
    expect(refused).toMatchObject({ status: 'failed', statusCode: 400 });
    expect(refused.status === 'failed' && refused.error.message).toContain(
      'answered 400: {"error":"bad payload"}',
    );
    const redirected = await sender.send(message);
    expect(redirected).toMatchObject({ status: 'failed', statusCode: 302 });
    expect(redirected.status === 'failed' && redirected.error.message).toContain(
      'Redirects are not followed; configure the URL it redirects to (https://elsewhere.example.com/x)',
    );
    expect(hook.requests).toHaveLength(2);
  });

  it('waits at least as long as 429 Retry-After asks, and hands a long one back to the outbox', async () => {
    const hook = await receiver([{ status: 429, headers: { 'retry-after': '2' } }, { status: 200 }]);
    const sender = createWebhookSender(channel(hook.url));
    const message = renderWebhookMessage(loadOrdersNotice());
    const waits: number[] = [];
    const report = await deliverWithRetry((_, options) => sender.send(message, options), fast, {
      sleep: (ms) => {
        waits.push(ms);
        return Promise.resolve();
      },
    });
    expect(report.result.status).toBe('delivered');
    expect(waits).toEqual([2000]);

    const busy = await receiver([{ status: 503, headers: { 'retry-after': '3600' } }]);
    const later = createWebhookSender(channel(busy.url));
    const now = 1_760_000_000_000;
    const handedBack = await deliverWithRetry(
      (_, options) => later.send(message, options),
      { ...fast, maxWaitMs: 60_000 },
      {
        now: () => now,
        previousAttempts: 4,
      },
    );
    expect(handedBack).toMatchObject({ attempts: 1, totalAttempts: 5, nextAttemptAtMs: now + 3_600_000 });
    expect(handedBack.result).toMatchObject({ status: 'retry', statusCode: 503, retryAfterMs: 3_600_000 });
    expect(busy.requests).toHaveLength(1);
  });

  it('retries network errors and timeouts, and stops after maxAttempts with the next attempt scheduled', async () => {
    const refused = createWebhookSender(channel(`http://127.0.0.1:${await closedPort()}/hook`));
    const message = renderWebhookMessage(loadOrdersNotice());
    const now = 1_760_000_000_000;
    const report = await deliverWithRetry(
      (_, options) => refused.send(message, options),
      { ...fast, maxAttempts: 2 },
      {
        now: () => now,
        random: () => 0,
      },
    );
    expect(report.attempts).toBe(2);
    expect(report.result.status).toBe('retry');
    expect(report.result.status === 'retry' && report.result.error.message).toMatch(/failed: ECONNREFUSED/);
    // After attempt 2, retry 2's delay: ceiling 10 ms, jitter 0 gives half of it.
    expect(report.nextAttemptAtMs).toBe(now + 5);

    const hang = await receiver(() => 'hang');
    const slow = createWebhookSender(channel(hang.url), { timeoutMs: 150 });
    const timedOut = await slow.send(message);
    expect(timedOut.status).toBe('retry');
    expect(timedOut.status === 'retry' && timedOut.error.message).toMatch(/timed out after 150 ms/);
    expect(hang.requests).toHaveLength(1);
  });

  it('stops waiting when its signal aborts, and says when to try next', async () => {
    const hook = await receiver([{ status: 500 }]);
    const sender = createWebhookSender(channel(hook.url));
    const controller = new AbortController();
    const report = await deliverWithRetry(
      (_, options) => sender.send(renderWebhookMessage(loadOrdersNotice()), options),
      { baseDelayMs: 3_600_000, maxDelayMs: 3_600_000, maxWaitMs: 7_200_000 },
      { signal: controller.signal, onAttempt: () => controller.abort() },
    );
    expect(report.attempts).toBe(1);
    expect(report.result.status).toBe('retry');
    expect(report.nextAttemptAtMs).toBeGreaterThan(Date.now() + 1_000_000);
  });
});
