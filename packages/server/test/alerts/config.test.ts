import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_RETRY_GRACE_MS,
  alertsConfigSchema,
  checkAlertsConfig,
  durationMs,
  formatAlertsConfigProblem,
  parseAlertsConfig,
  readAlertsConfig,
  redactAlertsDocument,
} from '../../src/alerts/config.js';
import { HeadwaterError } from '../../src/core/errors.js';

const secret = (): string => `whsec_${randomBytes(32).toString('base64')}`;

const FULL = `
explorerUrl: https://lineage.example.com/
channels:
  ops:
    type: webhook
    url: https://hooks.example.com/headwater
    secret: \${OPS_SECRET}
  finance-slack:
    type: slack
    url: https://hooks.slack.com/services/\${SLACK_PATH}
  mail:
    type: email
    smtp: { host: smtp.example.com, port: 465, user: alerts, password: "\${SMTP_PASSWORD}" }
    from: Headwater <alerts@example.com>
    to: oncall@example.com
owners:
  team:finance: [finance-slack, finance@example.com]
  user:ann: ann@example.com
rules:
  - name: finance
    on: [run_failed, assertion_failed]
    where:
      namespace: prod-*
      dataset: [finance.*, dashboards.revenue]
    retryGrace: 15m
    notify: { owners: both, depth: 3, channels: ops }
    throttle: 1h30m
  - on: run_overdue
`;

describe('parseAlertsConfig', () => {
  it('resolves a full configuration: env references, lists, durations, defaults and the e-mail channel', () => {
    const env = { OPS_SECRET: secret(), SLACK_PATH: 'T000/B000/XXXX', SMTP_PASSWORD: 'pa$$word' };
    const config = parseAlertsConfig(FULL, 'alerts.yml', { env });
    expect(config.explorerUrl).toBe('https://lineage.example.com');
    expect(config.channels.ops).toEqual({
      type: 'webhook',
      name: 'ops',
      url: 'https://hooks.example.com/headwater',
      secret: env.OPS_SECRET,
    });
    expect(config.channels['finance-slack']).toMatchObject({
      type: 'slack',
      url: 'https://hooks.slack.com/services/T000/B000/XXXX',
    });
    expect(config.channels.mail).toEqual({
      type: 'email',
      name: 'mail',
      smtp: { host: 'smtp.example.com', port: 465, secure: true, user: 'alerts', password: 'pa$$word' },
      from: 'Headwater <alerts@example.com>',
      to: ['oncall@example.com'],
    });
    expect(config.emailChannel).toBe('mail');
    expect(config.owners).toEqual({
      'team:finance': [{ channel: 'finance-slack' }, { email: 'finance@example.com' }],
      'user:ann': [{ email: 'ann@example.com' }],
    });
    expect(config.rules).toEqual([
      {
        name: 'finance',
        on: ['run_failed', 'assertion_failed'],
        where: { namespace: ['prod-*'], dataset: ['finance.*', 'dashboards.revenue'], job: undefined },
        retryGraceMs: 15 * 60_000,
        notify: { owners: 'both', depth: 3, channels: ['ops'] },
        throttleMs: 90 * 60_000,
      },
      {
        name: 'rules[1]',
        on: ['run_overdue'],
        where: { namespace: undefined, dataset: undefined, job: undefined },
        retryGraceMs: 0,
        notify: { owners: 'both', depth: undefined, channels: [] },
        throttleMs: 0,
      },
    ]);
    expect(Object.isFrozen(config.rules[0]!.notify.channels)).toBe(true);
  });

  it('gives run_failed rules a default retry grace, and an empty file means no alerts', () => {
    const config = parseAlertsConfig('rules: [{ on: run_failed }]', 'a.yml', { env: {} });
    expect(config.rules[0]!.retryGraceMs).toBe(DEFAULT_RETRY_GRACE_MS);
    expect(parseAlertsConfig('', 'empty.yml', { env: {} })).toEqual({
      explorerUrl: undefined,
      emailChannel: undefined,
      channels: {},
      owners: {},
      rules: [],
    });
  });

  it('names the path, line and column of a bad duration', () => {
    const text = [
      'rules:',
      '  - on: run_failed',
      '  - on: run_failed',
      '  - on: run_failed',
      '    retryGrace: 10 minutes',
    ].join('\n');
    const error = catchError(() => parseAlertsConfig(text, 'alerts.yml', { env: {} }));
    expect(error).toBeInstanceOf(HeadwaterError);
    expect(error.code).toBe('INVALID_CONFIG');
    expect(error.details).toEqual([
      'alerts.yml:5:17: rules[2].retryGrace: "10 minutes" is not a duration like 10m.',
    ]);
    expect(error.message).toContain('rules[2].retryGrace: "10 minutes" is not a duration like 10m');
  });

  it('reports every problem at once, each with its path and what would be right', () => {
    const text = `
channels:
  ops: { type: webhok, url: x }
  hook: { type: webhook, url: "ftp://x", secret: whsec_c2hvcnQ= }
  "bad name": { type: slack, url: https://hooks.slack.com/x }
owners:
  team:finance: [finace-slack, not-an-address@]
rules:
  - on: [run_failed, run_fail]
    retry_grace: 10m
  - on: assertion_failed
    retryGrace: 5m
    notify: { owners: everyone, depth: -1, channels: [nowhere] }
  - where: { job: load_* }
`;
    const error = catchError(() => parseAlertsConfig(text, 'a.yml', { env: {} }));
    // Shape problems are reported first; the document is only resolved once its shape is right.
    expect(error.details).toEqual([
      'a.yml:3:16: channels.ops.type: "webhok" is not a channel type; use webhook, slack or email.',
      'a.yml:5:3: channels["bad name"]: "bad name" is not a channel name (letters, digits, _, - and .).',
      'a.yml:9:22: rules[0].on[1]: "run_fail" is not one of run_failed, assertion_failed, run_overdue, run_missing.',
      'a.yml:10:5: rules[0].retry_grace: unknown key; did you mean retryGrace? (allowed here: name, on, where, retryGrace, notify, throttle)',
      'a.yml:13:23: rules[1].notify.owners: "everyone" is not one of root, impacted, both, none.',
      'a.yml:13:40: rules[1].notify.depth: the number -1 is not a whole number of hops, 0 or more.',
      'a.yml:14:5: rules[2]: on is missing: give a signal kind (run_failed, assertion_failed, run_overdue, run_missing) or a list of them.',
    ]);
  });

  it('then checks what a schema cannot: references, channels, secrets, URLs, addresses', () => {
    const text = `
channels:
  hook: { type: webhook, url: "ftp://x", secret: whsec_c2hvcnQ= }
  slack: { type: slack, url: "\${SLACK_URL}" }
  mail-a: { type: email, smtp: { host: a, password: p }, from: nobody }
  mail-b: { type: email, smtp: { host: b }, from: b@example.com }
owners:
  team:finance: [finace-slack, ann@example.com, mail-b]
rules:
  - on: assertion_failed
    retryGrace: 5m
    notify: { channels: [nowhere, mail-a] }
  - { name: dup, on: run_missing }
  - { name: dup, on: run_overdue }
`;
    const error = catchError(() => parseAlertsConfig(text, 'a.yml', { env: {} }));
    expect(error.details).toEqual([
      'a.yml:3:31: channels.hook.url: the webhook URL must be an http:// or https:// URL.',
      expect.stringMatching(
        /^a\.yml:3:50: channels\.hook\.secret: the secret must be whsec_ followed by 24 to 64 random bytes in base64 .*randomBytes\(32\)/,
      ),
      'a.yml:4:30: channels.slack.url: the environment variable SLACK_URL is not set; set it, or write the value in the file.',
      'a.yml:5:53: channels.mail-a.smtp.password: a password needs a user; add smtp.user.',
      'a.yml:5:64: channels.mail-a.from: "nobody" is not an e-mail address like alerts@example.com.',
      'a.yml:8:18: owners["team:finance"][0]: there is no channel "finace-slack" in channels (known: hook, slack, mail-a, mail-b).',
      'a.yml:8:32: owners["team:finance"][1]: an e-mail address needs to know which email channel sends it (mail-a, mail-b); set emailChannel.',
      'a.yml:8:49: owners["team:finance"][2]: the email channel mail-b has no `to`, so naming it sends nothing; write the owner\'s e-mail address instead, or add channels.mail-b.to.',
      'a.yml:11:17: rules[0].retryGrace: a retry grace only applies to run_failed; add run_failed to on, or remove retryGrace.',
      'a.yml:12:26: rules[0].notify.channels[0]: there is no channel "nowhere" in channels (known: hook, slack, mail-a, mail-b).',
      'a.yml:12:35: rules[0].notify.channels[1]: the email channel mail-a has no `to`, so a rule naming it sends nothing; add channels.mail-a.to.',
      'a.yml:14:13: rules[2].name: the name dup is already used by rules[1]; names must differ.',
    ]);
    // A secret's value is never repeated in a message, even when it is wrong.
    expect(error.message).not.toContain('c2hvcnQ');
  });

  it('reads a file, and says which file could not be read', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'alerts-config-'));
    try {
      const file = path.join(dir, 'alerts.yml');
      await writeFile(file, 'rules: [{ on: run_missing, throttle: 2d }]\n');
      expect(readAlertsConfig(file, { env: {} }).rules[0]!.throttleMs).toBe(2 * 86_400_000);
      const missing = catchError(() => readAlertsConfig(path.join(dir, 'nope.yml')));
      expect(missing.message).toMatch(/^--alerts-config: cannot read .*nope\.yml: ENOENT/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('says what a channel without a type or a URL lacks', () => {
    const error = catchError(() =>
      parseAlertsConfig('channels:\n  x: { type: slack }\n  y: { url: 5 }\n', 'c.yml', { env: {} }),
    );
    expect(error.details).toEqual([
      "c.yml:2:6: channels.x: url is missing: give the Slack incoming webhook's URL.",
      'c.yml:3:6: channels.y: type is missing: give the channel type: webhook, slack or email.',
    ]);
  });

  it('reports YAML syntax errors with their line', () => {
    const error = catchError(() =>
      parseAlertsConfig('rules:\n  - on: [run_failed\n', 'broken.yml', { env: {} }),
    );
    expect(error.details).toEqual([
      'broken.yml:3:1: not valid YAML: Flow sequence in block collection must be sufficiently indented and end with a ]',
    ]);
  });
});

describe('checkAlertsConfig (the API path)', () => {
  it('accepts data as JSON gives it, with the same rules as the file', () => {
    const check = checkAlertsConfig(
      {
        channels: { ops: { type: 'slack', url: 'http://127.0.0.1:9/x' } },
        rules: [{ on: 'run_failed', retryGrace: 'soon' }],
      },
      { env: {} },
    );
    expect(check.ok).toBe(false);
    expect(!check.ok && check.problems).toEqual([
      { path: 'rules[0].retryGrace', message: '"soon" is not a duration like 10m.' },
    ]);
    expect(!check.ok && formatAlertsConfigProblem(check.problems[0]!)).toBe(
      'rules[0].retryGrace: "soon" is not a duration like 10m.',
    );
  });

  it('publishes one JSON Schema that a client can validate against', () => {
    expect(alertsConfigSchema.properties.rules.items.required).toEqual(['on']);
    expect(JSON.parse(JSON.stringify(alertsConfigSchema))).toEqual(alertsConfigSchema);
  });

  it('keeps a literal ${ with $${', () => {
    const check = checkAlertsConfig(
      { channels: { m: { type: 'email', smtp: { host: 'h', user: 'u', password: 'a$${b}' }, from: 'a@b' } } },
      { env: {} },
    );
    expect(check.ok && check.config.channels.m).toMatchObject({ smtp: { password: 'a${b}' } });
  });
});

describe('durationMs', () => {
  it.each([
    ['10m', 600_000],
    ['1h30m', 5_400_000],
    ['250ms', 250],
    ['1.5s', 1500],
    ['2d', 172_800_000],
  ])('%s is %d ms', (text, ms) => {
    expect(durationMs(text)).toBe(ms);
  });

  it.each(['10', '10 minutes', 'm', '', '-1s', '1w'])('%j is not a duration', (text) => {
    expect(durationMs(text)).toBeUndefined();
  });
});

describe('redactAlertsDocument', () => {
  it('hides secrets but keeps references and everything else', () => {
    const document = {
      channels: {
        ops: { type: 'webhook', url: 'https://h.example.com/t0ken', secret: '${OPS_SECRET}' },
        s: { type: 'slack', url: 'https://hooks.slack.com/services/T/B/X' },
        m: { type: 'email', smtp: { host: 'h', user: 'u', password: 'hunter2' }, from: 'a@b' },
      },
      rules: [{ on: 'run_failed' }],
    };
    expect(redactAlertsDocument(document)).toEqual({
      channels: {
        ops: { type: 'webhook', url: '[redacted]', secret: '${OPS_SECRET}' },
        s: { type: 'slack', url: '[redacted]' },
        m: { type: 'email', smtp: { host: 'h', user: 'u', password: '[redacted]' }, from: 'a@b' },
      },
      rules: [{ on: 'run_failed' }],
    });
  });
});

function catchError(fn: () => unknown): HeadwaterError {
  try {
    fn();
  } catch (error) {
    if (error instanceof HeadwaterError) return error;
    throw error;
  }
  throw new Error('expected an error');
}
