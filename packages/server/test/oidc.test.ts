/**
 * OIDC against a real issuer: a JWKS and discovery document served over HTTP (test/helpers/oidc-issuer.ts), a
 * `headwater serve` started with --oidc-issuer, and tokens accepted or refused, each refusal with its reason in the
 * auth-failure metric and the audit log; then a key rotation the server picks up without a restart.
 */
import { createHmac } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnServer, type ChildServer } from './helpers/child-server.js';
import { startTestIssuer, type IssuerKey, type TestIssuer } from './helpers/oidc-issuer.js';
import { until } from './helpers/wait.js';
import { PRODUCER, at, T0 } from './read-scenario.js';

const AUDIENCE = 'headwater-test';
const MAX_AGE_S = 2;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const now = () => Math.floor(Date.now() / 1000);

const event = (namespace: string, runId: string) => ({
  eventType: 'COMPLETE',
  eventTime: at(T0),
  producer: PRODUCER,
  schemaURL: 'https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent',
  run: { runId },
  job: { namespace, name: 'load' },
  inputs: [],
  outputs: [{ namespace, name: 'table' }],
});

describe('OIDC with a real issuer', () => {
  let issuer: TestIssuer;
  let server: ChildServer;
  let dir: string;
  let key: IssuerKey;
  let adminToken: string;

  const call = async (method: string, url: string, token?: string, body?: unknown) => {
    const response = await fetch(`${server.url}${url}`, {
      method,
      headers: {
        ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    return { status: response.status, text, json: () => JSON.parse(text) as Record<string, unknown> };
  };
  /** The refusal a token gets: 401 with the reason in the message. */
  const refused = async (token: string) => {
    const answer = await call('GET', '/api/v1/namespaces', token);
    expect(answer.status, answer.text).toBe(401);
    return String(answer.json().message);
  };
  const accepted = async (token: string) => {
    const answer = await call('GET', '/api/v1/namespaces', token);
    expect(answer.status, answer.text).toBe(200);
  };
  const failures = async () => {
    const metrics = await call('GET', '/metrics', adminToken);
    expect(metrics.status).toBe(200);
    const counts: Record<string, number> = {};
    for (const match of metrics.text.matchAll(/^headwater_auth_failures_total\{reason="([^"]+)"\} (\d+)$/gm))
      counts[match[1]!] = Number(match[2]);
    return counts;
  };

  beforeAll(async () => {
    issuer = await startTestIssuer();
    key = await issuer.newKey();
    dir = await mkdtemp(path.join(os.tmpdir(), 'headwater-oidc-'));
    server = await spawnServer([
      '--data-dir',
      dir,
      '--log-level',
      'silent',
      '--oidc-issuer',
      issuer.url,
      '--oidc-audience',
      AUDIENCE,
      '--oidc-clock-tolerance',
      '5',
      '--oidc-jwks-max-age',
      String(MAX_AGE_S),
      '--oidc-grants',
      'groups=platform:admin:*;groups=eng:writer:eng*',
    ]);
    adminToken = await issuer.sign(key, { sub: 'root', groups: ['platform'] });
  }, 90_000);
  afterAll(async () => {
    server?.process.kill('SIGTERM');
    await server?.exited;
    await issuer?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('accepts valid tokens with the grants their claims map to, scoped to namespaces', async () => {
    expect((await call('GET', '/api/v1/namespaces')).status).toBe(401);
    const eng = await issuer.sign(key, { sub: 'ana', groups: ['eng', 'other'] });
    expect(
      (await call('POST', '/api/v1/lineage', eng, event('eng-jobs', '0190d3a2-0000-7000-8000-0000000000f1')))
        .status,
    ).toBe(201);
    const foreign = await call(
      'POST',
      '/api/v1/lineage',
      eng,
      event('ops-jobs', '0190d3a2-0000-7000-8000-0000000000f2'),
    );
    expect(foreign.status).toBe(403);
    expect(
      (
        await call(
          'POST',
          '/api/v1/lineage',
          adminToken,
          event('ops-jobs', '0190d3a2-0000-7000-8000-0000000000f3'),
        )
      ).status,
    ).toBe(201);
    const seen = (await call('GET', '/api/v1/namespaces', eng)).json() as { namespaces: { name: string }[] };
    expect(seen.namespaces.map((namespace) => namespace.name)).toEqual(['eng-jobs']);
    const all = (await call('GET', '/api/v1/namespaces', adminToken)).json() as {
      namespaces: { name: string }[];
    };
    expect(all.namespaces.map((namespace) => namespace.name).sort()).toEqual(['eng-jobs', 'ops-jobs']);
    // A valid token whose claims match no rule gets nothing.
    expect(await refused(await issuer.sign(key, { sub: 'bob', groups: ['sales'] }))).toContain(
      'no --oidc-grants rule',
    );
  });

  it('refuses each bad token with 401 and says why, in the metric and the audit log', async () => {
    const before = await failures();
    const stranger = await issuer.newKey({ kid: 'stranger', publish: false });
    const es384 = await issuer.newKey({ alg: 'ES384', kid: 'es384' });
    const claims = { sub: 'ana', groups: ['eng'] };
    const hs256 = (() => {
      const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
      const head = `${encode({ alg: 'HS256', typ: 'JWT', kid: key.kid })}.${encode({ ...claims, iss: issuer.url, aud: AUDIENCE, exp: now() + 300 })}`;
      // Signed with the public key as the HMAC secret: the classic algorithm-confusion attack.
      return `${head}.${createHmac('sha256', JSON.stringify(key.publicJwk)).update(head).digest('base64url')}`;
    })();
    const unsigned = `${Buffer.from('{"alg":"none"}').toString('base64url')}.${Buffer.from(JSON.stringify({ ...claims, iss: issuer.url, aud: AUDIENCE, exp: now() + 300 })).toString('base64url')}.`;
    const valid = await issuer.sign(key, claims);
    const [header, payload] = valid.split('.');
    const tampered = `${header}.${Buffer.from(JSON.stringify({ ...claims, groups: ['platform'], iss: issuer.url, aud: AUDIENCE, exp: now() + 300 })).toString('base64url')}.${valid.split('.')[2]}`;
    expect(payload).toBeDefined();

    const cases: [string, string, RegExp][] = [
      [
        await issuer.sign(key, { ...claims, exp: now() - 60 }),
        'token_expired',
        /"exp" claim timestamp check failed/,
      ],
      [await issuer.sign(key, { ...claims, nbf: now() + 60 }), 'token_not_yet_valid', /"nbf" claim/],
      [
        await issuer.sign(key, claims, 'someone-else'),
        'token_wrong_audience',
        /unexpected "aud" claim value/,
      ],
      [
        await issuer.sign(key, { ...claims, iss: 'https://evil.example' }),
        'token_wrong_issuer',
        /unexpected "iss" claim value/,
      ],
      [
        await issuer.sign(stranger, claims),
        'token_unknown_key',
        /no applicable key found in the JSON Web Key Set/,
      ],
      [hs256, 'token_wrong_algorithm', /"alg" \(Algorithm\) Header Parameter value not allowed/],
      [
        await issuer.sign(es384, claims),
        'token_wrong_algorithm',
        /"alg" \(Algorithm\) Header Parameter value not allowed/,
      ],
      [unsigned, 'token_wrong_algorithm', /"alg" \(Algorithm\) Header Parameter value not allowed/],
      [tampered, 'token_invalid', /signature verification failed/],
      [
        await issuer.sign(key, { ...claims, exp: undefined }),
        'token_invalid',
        /missing required "exp" claim/,
      ],
    ];
    for (const [token, , message] of cases) expect(await refused(token)).toMatch(message);

    const expected: Record<string, number> = {};
    for (const [, reason] of cases) expected[reason] = (expected[reason] ?? 0) + 1;
    const after = await failures();
    for (const [reason, count] of Object.entries(expected))
      expect(after[reason] ?? 0, reason).toBe((before[reason] ?? 0) + count);
    // The audit log has each, as auth.failure with the reason (written as the refusal goes out, so perhaps after).
    const details = await until(
      'every reason in the audit log',
      async () =>
        (
          (await call('GET', '/api/v1/audit?action=auth.&limit=1000', adminToken)).json() as {
            entries: { detail: string | null }[];
          }
        ).entries.map((entry) => entry.detail),
      (seen) => Object.keys(expected).every((reason) => seen.includes(reason)),
      { timeoutMs: 20_000 },
    );
    for (const reason of Object.keys(expected)) expect(details, reason).toContain(reason);
  });

  it('picks up a rotated key without a restart, and refuses a removed key once its cache expires', async () => {
    // Time passes on purpose: the last fetch is then more than the refetch cooldown ago, so a new key id fetches
    // the set at once.
    await sleep(MAX_AGE_S * 1000 + 200);
    const next = await issuer.newKey({ kid: 'rotated' });
    const fetches = issuer.jwksFetches;
    await accepted(await issuer.sign(next, { sub: 'root', groups: ['platform'] }));
    expect(issuer.jwksFetches).toBe(fetches + 1);
    // Made-up key ids do not make it fetch again while it cools down.
    const unknown = await issuer.newKey({ kid: 'made-up', publish: false });
    for (let i = 0; i < 5; i++) await refused(await issuer.sign(unknown, { sub: 'x', groups: ['eng'] }));
    expect(issuer.jwksFetches).toBe(fetches + 1);

    // The issuer removes the old key: tokens signed with it are accepted while the cached set is fresh ...
    issuer.unpublish(key.kid);
    const old = await issuer.sign(key, { sub: 'root', groups: ['platform'] });
    await accepted(old);
    // ... and refused once it is older than --oidc-jwks-max-age (time passes on purpose), when it is fetched again
    // before the check.
    await sleep(MAX_AGE_S * 1000 + 200);
    expect(await refused(old)).toMatch(/no applicable key found/);
    await accepted(await issuer.sign(next, { sub: 'root', groups: ['platform'] }));
  });
});
