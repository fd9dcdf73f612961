import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveConfig } from '../src/config/server-config.js';
import { createServer } from '../src/servers/server.js';
import { ApiKeyVerifier, createApiKey, keyParts } from '../src/security/keys.js';
import type { Queryable } from '../src/store/db.js';
import { ReplicaCredential } from '../src/security/replica-credential.js';
import { backends, startApp } from './helpers/backends.js';
import { until } from './helpers/wait.js';
import { runEvent, RUN_1, T0 } from './read-scenario.js';

const event = (namespace: string, input = 'open://lake', runId = RUN_1) =>
  runEvent({
    eventType: 'COMPLETE',
    time: T0,
    runId,
    job: 'load',
    namespace,
    inputs: [{ namespace: input, name: 'raw' }],
    outputs: [{ namespace: 'open://lake', name: 'clean' }],
  });

describe.each(backends())('authentication and authorisation on the $name store', (backend) => {
  let ctx: Awaited<ReturnType<typeof startApp>>;
  const keys: Record<string, string> = {};
  const call = (
    method: string,
    url: string,
    key?: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ) =>
    ctx.server.app.inject({
      method: method as 'GET',
      url,
      headers: {
        ...(key ? { authorization: `Bearer ${key}` } : {}),
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...headers,
      },
      ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
    });

  beforeAll(async () => {
    ctx = await startApp(backend);
  });
  afterAll(async () => {
    await ctx?.stop();
  });

  it('needs no key on loopback while none exists, then a key for every request', async () => {
    expect((await call('POST', '/api/v1/lineage', undefined, event('open-jobs'))).statusCode).toBe(201);
    expect((await call('GET', '/api/v1/namespaces')).statusCode).toBe(200);
    expect((await call('GET', '/api/v1/auth/config')).json()).toEqual({
      authRequired: false,
      anonymousRead: false,
      oidc: null,
    });
    const created = await call('POST', '/api/v1/keys', undefined, {
      name: 'root',
      role: 'admin',
      namespaces: ['*'],
    });
    expect(created.statusCode).toBe(201);
    keys.admin = created.json().key as string;
    expect(keys.admin).toMatch(/^hw_[a-z0-9]{12}_/);
    const anonymous = await call('GET', '/api/v1/namespaces');
    expect(anonymous.statusCode).toBe(401);
    expect(anonymous.json().error).toBe('UNAUTHORIZED');
    expect((await call('GET', '/api/v1/namespaces', `${keys.admin}x`)).statusCode).toBe(401);
    expect((await call('GET', '/api/v1/namespaces', 'hw_aaaaaaaaaaaa_' + 'a'.repeat(43))).statusCode).toBe(
      401,
    );
    expect((await call('GET', '/api/v1/namespaces', keys.admin)).statusCode).toBe(200);
    // What the explorer's sign-in asks: public, and now saying that credentials are needed; then who signed in.
    expect((await call('GET', '/api/v1/auth/config')).json()).toMatchObject({
      authRequired: true,
      oidc: null,
    });
    expect((await call('GET', '/api/v1/auth/me')).statusCode).toBe(401);
    expect((await call('GET', '/api/v1/auth/me', keys.admin)).json()).toMatchObject({
      name: 'root',
      grants: [{ role: 'admin', namespaces: ['*'] }],
    });
    // What stays public: health, the API description, the explorer.
    expect((await call('GET', '/healthz')).statusCode).toBe(200);
    expect((await call('GET', '/api/v1/openapi.json')).statusCode).toBe(200);
    for (const [name, role, namespaces] of [
      ['reader', 'reader', ['open*']],
      ['writer', 'writer', ['open*']],
      ['lake-admin', 'admin', ['open://lake']],
    ] as const) {
      const answer = await call('POST', '/api/v1/keys', keys.admin, { name, role, namespaces });
      keys[name] = answer.json().key as string;
    }
    // Keys are stored hashed: the secret is nowhere in the store.
    const rows = await ctx.server.db.query<Record<string, unknown>>('SELECT * FROM api_keys');
    expect(JSON.stringify(rows)).not.toContain(keyParts(keys.admin)!.secret);
  });

  it('gives each role what it may do, over its namespaces only', async () => {
    expect((await call('POST', '/api/v1/lineage', keys.reader, event('open-jobs'))).statusCode).toBe(403);
    expect((await call('POST', '/api/v1/lineage', keys.writer, event('open-jobs'))).statusCode).toBe(201);
    // An event naming a namespace the writer does not cover is refused whole, and alone in a batch.
    const foreign = await call('POST', '/api/v1/lineage', keys.writer, event('open-jobs', 'vault://secret'));
    expect(foreign.statusCode).toBe(403);
    expect(foreign.json().message).toContain('"vault://secret"');
    const batch = await call('POST', '/api/v1/lineage/batch', keys.writer, [
      event('open-jobs'),
      event('other-jobs', 'open://lake', '0190d3a2-0000-7000-8000-0000000000c1'),
    ]);
    expect(batch.json()).toMatchObject({ status: 'partial_success', summary: { successful: 1, failed: 1 } });
    expect(batch.json().failed_events[0]).toMatchObject({ index: 1, retriable: false });
    // Deletes and tags are for admins, in their namespaces; a global tag needs an admin over '*'.
    const dataset = `/api/v1/namespaces/${encodeURIComponent('open://lake')}/datasets/clean`;
    expect((await call('DELETE', dataset, keys.writer)).statusCode).toBe(403);
    expect((await call('POST', `${dataset}/tags/PII`, keys['lake-admin'])).statusCode).not.toBe(403);
    expect((await call('PUT', '/api/v1/tags/PII', keys['lake-admin'], { description: 'x' })).statusCode).toBe(
      403,
    );
    // A namespace it may not even read is not there for it.
    expect((await call('DELETE', '/api/v1/namespaces/open-jobs', keys['lake-admin'])).statusCode).toBe(404);
    expect((await call('DELETE', dataset, keys['lake-admin'])).statusCode).toBe(200);
    // Keys and the audit log are for admins over everything.
    expect((await call('GET', '/api/v1/keys', keys['lake-admin'])).statusCode).toBe(403);
    expect((await call('GET', '/api/v1/audit', keys.reader)).statusCode).toBe(403);
  });

  it('audits every non-ingest write and every refused credential', async () => {
    type Audit = { entries: { action: string; status: number; detail: string | null }[]; totalCount: number };
    const actionsOf = (audit: Audit) => audit.entries.map((entry) => `${entry.action} ${entry.status}`);
    const authCount = (audit: Audit) =>
      actionsOf(audit).filter((action) => action.startsWith('auth.')).length;
    const complete = ({ audit, failures }: { audit: Audit; failures: Audit }) =>
      actionsOf(audit).includes('DELETE /api/v1/namespaces/:namespace/datasets/:dataset 200') &&
      actionsOf(audit).includes('POST /api/v1/keys 201') &&
      actionsOf(audit).filter((action) => action.startsWith('auth.failure')).length >= 8 &&
      audit.entries.some((entry) => entry.detail === 'key_unknown') &&
      failures.totalCount === authCount(audit);
    // The audit entries of the requests above are written as they are answered, so perhaps after the answer (and
    // one may land between the two reads: then they are read again).
    const { audit, failures } = await until(
      'the audit entries of the requests above',
      async () => ({
        audit: (await call('GET', '/api/v1/audit?limit=1000', keys.admin)).json<Audit>(),
        failures: (await call('GET', '/api/v1/audit?action=auth.', keys.admin)).json<Audit>(),
      }),
      complete,
      { timeoutMs: 20_000 },
    );
    const actions = actionsOf(audit);
    expect(actions).toContain('DELETE /api/v1/namespaces/:namespace/datasets/:dataset 200');
    expect(actions).toContain('POST /api/v1/keys 201');
    expect(actions.filter((action) => action.startsWith('auth.failure')).length).toBeGreaterThanOrEqual(8);
    expect(audit.entries.some((entry) => entry.detail === 'key_unknown')).toBe(true);
    expect(failures.totalCount).toBe(authCount(audit));
  });

  it('revokes and expires keys', async () => {
    const revoked = await call('DELETE', '/api/v1/keys/reader', keys.admin);
    expect(revoked.statusCode).toBe(200);
    expect((await call('GET', '/api/v1/namespaces', keys.reader)).statusCode).toBe(401);
    const { token } = await createApiKey(ctx.server.db, {
      name: 'short',
      role: 'reader',
      namespaces: ['*'],
      expiresAt: new Date(Date.now() + 300),
    });
    expect((await call('GET', '/api/v1/namespaces', token)).statusCode).toBe(200);
    // Time passes on purpose, past the key's expiry.
    await new Promise((resolve) => setTimeout(resolve, 400));
    const expired = await call('GET', '/api/v1/namespaces', token);
    expect(expired.statusCode).toBe(401);
    expect(expired.json().message).toContain('expired');
  });

  it("takes the store's replica credential for forwarded batches only, in any namespace", async () => {
    const replica = (await new ReplicaCredential(ctx.server.db).header()).slice('Bearer '.length);
    expect(replica).toMatch(/^hwr_[0-9a-f]{64}$/);
    const forwarded = await call('POST', '/api/v1/lineage/batch', replica, [
      event('vault-jobs', 'vault://x'),
    ]);
    expect(forwarded.statusCode).toBe(200);
    expect(forwarded.json()).toMatchObject({ summary: { successful: 1, failed: 0 } });
    // Good for that endpoint only: not for reads, single events, deletes or keys.
    for (const [method, url] of [
      ['GET', '/api/v1/namespaces'],
      ['POST', '/api/v1/lineage'],
      ['DELETE', '/api/v1/namespaces/vault-jobs'],
      ['GET', '/api/v1/keys'],
    ] as const) {
      const answer = await call(method, url, replica, method === 'POST' ? event('vault-jobs') : undefined);
      expect([method, url, answer.statusCode]).toEqual([method, url, 401]);
      expect(answer.json().message).toContain('replica credential');
    }
    // Another store's secret, or a guess, is refused.
    const wrong = await call('POST', '/api/v1/lineage/batch', `hwr_${'0'.repeat(64)}`, [event('vault-jobs')]);
    expect(wrong.statusCode).toBe(401);
    // Audited as the refusals go out, so perhaps after the answer.
    const details = await until(
      'the replica credential refusals in the audit log',
      async () =>
        (await call('GET', '/api/v1/audit?action=auth.', keys.admin))
          .json<{ entries: { detail: string | null }[] }>()
          .entries.map((entry) => entry.detail),
      (seen) => seen.includes('replica_scope') && seen.includes('replica_invalid'),
      { timeoutMs: 20_000 },
    );
    expect(details).toEqual(expect.arrayContaining(['replica_scope', 'replica_invalid']));
  });

  it('refuses DNS-rebinding hosts and cross-site writes', async () => {
    const rebinding = await call('GET', '/api/v1/namespaces', keys.admin, undefined, {
      host: 'attacker.example:5000',
    });
    expect(rebinding.statusCode).toBe(403);
    expect(rebinding.json().message).toContain('attacker.example');
    const csrf = await call('POST', '/api/v1/tags/X', keys.admin, undefined, {
      origin: 'https://evil.example',
    });
    expect(csrf.statusCode).toBe(403);
    expect(csrf.json().message).toContain('cross-site');
    // Same origin is fine; CORS is off (no Access-Control-Allow-Origin for anyone).
    const same = await call(
      'PUT',
      '/api/v1/tags/X',
      keys.admin,
      { description: 'ok' },
      { origin: 'http://localhost:80' },
    );
    expect(same.statusCode).toBe(200);
    const preflight = await ctx.server.app.inject({
      method: 'GET',
      url: '/api/v1/namespaces',
      headers: { origin: 'https://evil.example', authorization: `Bearer ${keys.admin}` },
    });
    expect(preflight.headers['access-control-allow-origin']).toBeUndefined();
  });
});

describe.each(backends())('keys while the store is away ($name)', (backend) => {
  let ctx: Awaited<ReturnType<typeof startApp>>;
  beforeAll(async () => {
    ctx = await startApp(backend);
  });
  afterAll(async () => {
    await ctx?.stop();
  });

  it('are judged as last read, so reads and /metrics go on; a key never read needs the store', async () => {
    const db = ctx.server.db;
    let away = false;
    let now = 0;
    // The real store, with the outage injected where the verifier reads it.
    const store: Queryable = {
      query: <Row>(sql: string, params?: readonly unknown[]) =>
        away ? Promise.reject(new Error('the store is away')) : db.query<Row>(sql, params),
    };
    const verifier = new ApiKeyVerifier(store, true, () => now);
    expect(await verifier.anyKey()).toBe(false);
    away = true;
    now += 5_000;
    expect(await verifier.anyKey()).toBe(false);
    away = false;
    const { token } = await createApiKey(db, { name: 'seen', role: 'reader', namespaces: ['*'] });
    now += 5_000;
    expect(await verifier.anyKey()).toBe(true);
    expect(await verifier.verify(token)).toMatchObject({ principal: { name: 'seen' } });
    away = true;
    now += 60_000;
    expect(await verifier.verify(token)).toMatchObject({ principal: { name: 'seen' } });
    away = false;
    const unseen = await createApiKey(db, { name: 'unseen', role: 'reader', namespaces: ['*'] });
    away = true;
    await expect(verifier.verify(unseen.token)).rejects.toThrow('the store is away');
    await expect(new ApiKeyVerifier(store, true, () => now).anyKey()).rejects.toThrow('the store is away');
  });
});

describe('rate limits', () => {
  const [embedded] = backends();
  let ctx: Awaited<ReturnType<typeof startApp>>;
  const keys: Record<string, string> = {};
  const call = (method: string, url: string, key?: string) =>
    ctx.server.app.inject({
      method: method as 'GET',
      url,
      headers: key ? { authorization: `Bearer ${key}` } : {},
    });

  beforeAll(async () => {
    ctx = await startApp(embedded!, {
      security: {
        ...resolveConfig({}, {}).security,
        rateLimitPerKey: 5,
        rateLimitPerAddress: 3,
        rateLimitWindowSeconds: 1,
      },
    });
    keys.writer = (await createApiKey(ctx.server.db, { name: 'w', role: 'writer', namespaces: ['*'] })).token;
    keys.admin = (await createApiKey(ctx.server.db, { name: 'a', role: 'admin', namespaces: ['*'] })).token;
  });
  afterAll(async () => {
    await ctx?.stop();
  });

  it('limits requests per key with 429 and Retry-After, and lets a client that waits go on', async () => {
    const statuses: number[] = [];
    let retryAfter: string | undefined;
    for (let i = 0; i < 8; i++) {
      const answer = await call('GET', '/api/v1/namespaces', keys.writer);
      statuses.push(answer.statusCode);
      if (answer.statusCode === 429) retryAfter = String(answer.headers['retry-after']);
    }
    expect(statuses.slice(0, 5)).toEqual([200, 200, 200, 200, 200]);
    expect(statuses.slice(5)).toEqual([429, 429, 429]);
    expect(Number(retryAfter)).toBeGreaterThanOrEqual(1);
    // Another key is not limited by this one.
    expect((await call('GET', '/api/v1/namespaces', keys.admin)).statusCode).toBe(200);
    // Time passes on purpose, as long as Retry-After says.
    await new Promise((resolve) => setTimeout(resolve, Number(retryAfter) * 1000 + 50));
    expect((await call('GET', '/api/v1/namespaces', keys.writer)).statusCode).toBe(200);
  });

  it('limits requests without a valid credential per address', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await call('GET', '/api/v1/namespaces', 'hw_bad')).statusCode);
    expect(statuses).toEqual([401, 401, 401, 429, 429]);
    const metrics = await call('GET', '/metrics', keys.admin);
    expect(metrics.body).toMatch(/headwater_rate_limited_requests_total\{by="key"\} 3/);
    expect(metrics.body).toMatch(/headwater_rate_limited_requests_total\{by="address"\} 2/);
  });
});

describe('safe defaults when binding beyond loopback', () => {
  const [embedded] = backends();

  it('refuses to serve 0.0.0.0 without auth unless --insecure, and says where it listens', async () => {
    const { config: store, cleanup } = await embedded!.fresh();
    try {
      const base = {
        ...resolveConfig({}, {}),
        ...store,
        port: 0,
        logLevel: 'silent' as const,
        host: '0.0.0.0',
      };
      const open = await createServer(base);
      await expect(open.listen()).rejects.toThrow(/Refusing to serve 0\.0\.0\.0 without authentication/);
      await open.close();
      const insecure = await createServer({ ...base, security: { ...base.security, insecure: true } });
      await insecure.listen();
      await insecure.close();
      // With a key, it serves, and needs the key.
      const keyed = await createServer(base);
      await createApiKey(keyed.db, { name: 'a', role: 'admin', namespaces: ['*'] });
      const url = await keyed.listen();
      expect((await fetch(`${url.replace('0.0.0.0', '127.0.0.1')}/api/v1/namespaces`)).status).toBe(401);
      await keyed.close();
    } finally {
      await cleanup();
    }
  });
});
