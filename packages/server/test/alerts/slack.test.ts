import { afterEach, describe, expect, it } from 'vitest';
import type { SlackChannel } from '../../src/alerts/config.js';
import type { SlackMessage } from '../../src/alerts/slack-message.js';
import { renderSlackMessage } from '../../src/alerts/slack-message.js';
import { createSlackSender } from '../../src/alerts/slack-sender.js';
import type { Receiver } from './fixtures.js';
import { loadOrdersNotice, slackShaped, startReceiver } from './fixtures.js';

const receivers: Receiver[] = [];
afterEach(async () => {
  await Promise.all(receivers.splice(0).map((receiver) => receiver.close()));
});

async function slack(
  answer: Parameters<typeof startReceiver>[0] = slackShaped,
): Promise<{ receiver: Receiver; channel: SlackChannel }> {
  const receiver = await startReceiver(answer);
  receivers.push(receiver);
  return { receiver, channel: { type: 'slack', name: 'finance-slack', url: receiver.url } };
}

const textOf = (message: SlackMessage): string =>
  message.blocks
    .map((block) =>
      'text' in block
        ? block.text.text
        : 'elements' in block
          ? block.elements.map((e) => ('url' in e ? e.url : e.text)).join(' ')
          : '',
    )
    .join('\n');

describe('Slack delivery', () => {
  it('posts blocks and a fallback text that a Slack-shaped receiver accepts', async () => {
    const { receiver, channel } = await slack();
    const notice = loadOrdersNotice();
    const recipients = notice.recipients.filter(
      (recipient) => 'channel' in recipient.address && recipient.address.channel === channel.name,
    );
    const message = renderSlackMessage(notice, { recipients, explorerUrl: 'https://lineage.example.com' });

    const result = await createSlackSender(channel).send(message);

    expect(result).toEqual({ status: 'delivered', statusCode: 200 });
    const received = JSON.parse(receiver.requests[0]!.body) as SlackMessage;
    expect(received).toEqual(message);
    expect(received.text).toBe('Opened: Run failed: demo/load_orders (2 datasets downstream)');
    const text = textOf(received);
    expect(text).toContain('The run of demo/load_orders (run 0195f1c2-5b1e-7d3a-9c4e-2f1a0b9c8d7e) failed.');
    expect(text).toContain('> psycopg2.errors.UndefinedColumn: column "amount" does not exist');
    // Nearest first, with links into the explorer and the columns reached.
    expect(text).toMatch(
      /• <https:\/\/lineage\.example\.com\/datasets\/postgres%3A%2F%2Fdb%3A5432\/finance\.orders\|postgres:\/\/db:5432\/finance\.orders> \(amount\) · 1 hop\n• <[^|]+\|demo\/build_revenue> · 4 hops\n• <[^|]+\|postgres:\/\/db:5432\/dashboards\.revenue> · 5 hops/,
    );
    // Only this channel's reasons: not ann's, whose address is an e-mail.
    expect(text).toContain(
      'Told here because team:finance owns postgres://db:5432/finance.orders (1 hop downstream, columns amount).',
    );
    expect(text).not.toContain('user:ann');
    expect(text).toContain('https://lineage.example.com/incidents/inc-7f3a');
  });

  it('escapes names so that a dataset cannot mention @channel, and keeps within the limits', async () => {
    const { receiver, channel } = await slack();
    const long = 'x'.repeat(400);
    const notice = loadOrdersNotice('opened', {
      rootCause: {
        kind: 'job',
        job: { namespace: 'demo', name: `<!channel> & ${long}` },
        errorMessage: 'e'.repeat(5000),
      },
      impacted: {
        datasets: Array.from({ length: 40 }, (_, i) => ({
          namespace: 'n',
          name: `t${String(i).padStart(2, '0')}`,
          depth: 1 + (i % 3),
        })),
        jobs: [],
      },
    });
    const message = renderSlackMessage(notice);
    expect(await createSlackSender(channel).send(message)).toMatchObject({ status: 'delivered' });
    const received = JSON.parse(receiver.requests[0]!.body) as SlackMessage;
    // mrkdwn (the fallback, sections, context) is escaped; a plain_text header shows the name as it is.
    const mrkdwn = [
      received.text,
      ...received.blocks.flatMap((block) =>
        block.type === 'section'
          ? [block.text.text]
          : block.type === 'context'
            ? block.elements.map((e) => e.text)
            : [],
      ),
    ].join('\n');
    expect(mrkdwn).not.toContain('<!channel>');
    expect(mrkdwn).toContain('demo/&lt;!channel&gt; &amp; xxx');
    const header = received.blocks[0]!;
    expect(header.type === 'header' && header.text).toMatchObject({ type: 'plain_text' });
    expect(header.type === 'header' && header.text.text).toMatch(
      /^:red_circle: Run failed: demo\/<!channel> & x+…$/,
    );
    expect(header.type === 'header' && header.text.text.length).toBe(150);
    expect(textOf(received)).toContain('…and 30 more');
    expect(received.blocks.some((block) => block.type === 'actions')).toBe(false);
  });

  it('says the channel is gone on 410 channel_is_archived and fails on 404 channel_not_found', async () => {
    const { receiver, channel } = await slack([
      { status: 410, body: 'channel_is_archived' },
      { status: 404, body: 'channel_not_found' },
      { status: 429, headers: { 'retry-after': '30' }, body: 'rate_limited' },
    ]);
    const sender = createSlackSender(channel);
    const message = renderSlackMessage(loadOrdersNotice('resolved'));
    const gone = await sender.send(message);
    expect(gone.status).toBe('gone');
    expect(gone.status === 'gone' && gone.error.message).toContain('Slack channel finance-slack: POST');
    expect(gone.status === 'gone' && gone.error.message).toContain('answered 410: channel_is_archived');
    const missing = await sender.send(message);
    expect(missing).toMatchObject({ status: 'failed', statusCode: 404 });
    expect(await sender.send(message)).toMatchObject({
      status: 'retry',
      statusCode: 429,
      retryAfterMs: 30_000,
    });
    // The webhook's path is its secret, and stays out of every message.
    for (const result of [gone, missing])
      expect('error' in result && result.error.message).not.toContain('/hook');
    expect(receiver.requests).toHaveLength(3);
    expect(JSON.parse(receiver.requests[0]!.body).text).toBe(
      'Resolved: Run failed: demo/load_orders (2 datasets downstream)',
    );
  });
});
