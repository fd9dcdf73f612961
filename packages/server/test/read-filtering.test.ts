import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey } from '../src/security/keys.js';
import { backends, startApp } from './helpers/backends.js';
import { DAY, T0 } from './read-scenario.js';
import {
  MARKER,
  OPEN_JOBS,
  OPEN_LAKE,
  OPEN_RUN,
  OTHER_RUN,
  SECRET_JOBS,
  SECRET_RUN,
  SECRET_VAULT,
  securityEvents,
  VISIBLE_PATTERN,
} from './security-scenario.js';

interface OpenApiParameter {
  in: 'path' | 'query';
  name: string;
  required?: boolean;
  schema?: { type?: string; enum?: string[]; format?: string; items?: { enum?: string[] } };
}

type Values = Record<string, string[]>;

/**
 * A reader key scoped to the `open*` namespaces walks every GET route of the OpenAPI document (read from the
 * document itself, so a new route is walked without anyone adding it here) with every parameter filled from the
 * visible side, and finds nothing of the hidden side anywhere; the same requests naming the hidden side answer
 * exactly as requests naming something that does not exist.
 */
describe.each(backends())('read filtering on the $name store', (backend) => {
  let ctx: Awaited<ReturnType<typeof startApp>>;
  let reader: string;
  let admin: string;
  const visible: Values = {};

  beforeAll(async () => {
    ctx = await startApp(backend);
    const batch = await ctx.request('/api/v1/lineage/batch', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(securityEvents()),
    });
    expect(await batch.json()).toMatchObject({ status: 'success' });
    // A hidden dataset declared an alias of a visible one: the visible one's answers, search, lineage and the
    // list of aliases must not name it to the reader.
    const alias = { namespace: SECRET_VAULT, name: 'zzsecret_db.summary_copy' };
    const seen = await ctx.request('/api/v1/lineage', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        eventTime: new Date(T0).toISOString(),
        producer: 'https://example.com/read-filtering',
        schemaURL: 'https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/DatasetEvent',
        dataset: alias,
      }),
    });
    expect(seen.status).toBe(201);
    const declared = await ctx.request(
      `/api/v1/namespaces/${encodeURIComponent(SECRET_VAULT)}/datasets/${alias.name}/alias`,
      {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ namespace: OPEN_LAKE, name: 'reports.summary' }),
      },
    );
    expect(declared.status).toBe(200);
    admin = (await createApiKey(ctx.server.db, { name: 'admin', role: 'admin', namespaces: ['*'] })).token;
    reader = (
      await createApiKey(ctx.server.db, { name: 'reader', role: 'reader', namespaces: [VISIBLE_PATTERN] })
    ).token;
    const get = async <T>(path: string) =>
      (await ctx.server.app.inject({ url: path, headers: { authorization: `Bearer ${admin}` } })).json<T>();
    type Versions = { versions: { version: string }[] };
    const datasetVersions = await get<Versions>(
      `/api/v1/namespaces/${encodeURIComponent(OPEN_LAKE)}/datasets/reports.daily/versions`,
    );
    const jobVersions = await get<Versions>(`/api/v1/namespaces/${OPEN_JOBS}/jobs/load_report/versions`);
    const { sources } = await get<{ sources: { name: string }[] }>('/api/v1/sources');
    Object.assign(visible, {
      namespace: [OPEN_JOBS, OPEN_LAKE],
      dataset: ['reports.daily', 'reports.summary', `dataset:${OPEN_LAKE}:reports.daily`],
      job: ['load_report'],
      version: [...datasetVersions.versions.map((v) => v.version), jobVersions.versions[0]!.version],
      id: [OPEN_RUN],
      source: sources.map((source) => source.name).filter((name) => !MARKER.test(name)),
      nodeId: [
        `dataset:${OPEN_LAKE}:reports.daily`,
        `job:${OPEN_JOBS}:load_report`,
        `datasetField:${OPEN_LAKE}:reports.daily:total`,
        `dataset:${OPEN_LAKE}:reports.summary`,
      ],
      from: [OPEN_RUN, new Date(T0 - DAY).toISOString()],
      to: [OTHER_RUN, new Date(T0 + DAY).toISOString()],
      q: ['zzsecret', 'report', 'a', 'summary_copy'],
    });
  });
  afterAll(async () => {
    await ctx?.stop();
  });

  /** Every request of the walk: each required parameter over its candidates, plus the optional enums in full. */
  async function requests(hidden: boolean): Promise<{ route: string; url: string }[]> {
    const document = (await (await ctx.request('/api/v1/openapi.json')).json()) as {
      paths: Record<string, { get?: { parameters?: OpenApiParameter[] } }>;
    };
    const out: { route: string; url: string }[] = [];
    for (const [route, methods] of Object.entries(document.paths)) {
      if (!methods.get) continue;
      const parameters = methods.get.parameters ?? [];
      const candidates = (parameter: OpenApiParameter): string[] => {
        const schema = parameter.schema ?? {};
        if (schema.enum) return schema.enum;
        if (schema.format === 'date-time') return [new Date(T0 + DAY).toISOString()];
        if (hidden) {
          const secret: Values = {
            namespace: [SECRET_JOBS, SECRET_VAULT],
            dataset: ['zzsecret_db.accounts', `dataset:${SECRET_VAULT}:zzsecret_db.accounts`],
            job: ['zzsecret_export'],
            id: [SECRET_RUN],
            nodeId: [`dataset:${SECRET_VAULT}:zzsecret_db.accounts`, `job:${SECRET_JOBS}:zzsecret_export`],
            from: [SECRET_RUN],
            to: [SECRET_RUN],
          };
          if (secret[parameter.name]) return secret[parameter.name]!;
        }
        return visible[parameter.name] ?? (parameter.required ? ['x'] : []);
      };
      let variants: Record<string, string[]>[] = [{}];
      for (const parameter of parameters) {
        const values = candidates(parameter);
        if (parameter.required || parameter.in === 'path') {
          variants = variants.flatMap((variant) =>
            values.map((value) => ({ ...variant, [parameter.name]: [value] })),
          );
        } else if (
          !hidden &&
          values.length > 0 &&
          (parameter.schema?.enum || parameter.schema?.items?.enum)
        ) {
          const all = parameter.schema.enum ?? parameter.schema.items!.enum!;
          variants = [...variants, ...variants.map((variant) => ({ ...variant, [parameter.name]: all }))];
        }
      }
      for (const variant of variants) {
        let path = route;
        const query = new URLSearchParams();
        for (const parameter of parameters) {
          const values = variant[parameter.name];
          if (!values) continue;
          if (parameter.in === 'path')
            path = path.replace(`{${parameter.name}}`, encodeURIComponent(values[0]!));
          else for (const value of values) query.append(parameter.name, value);
        }
        out.push({ route, url: query.size > 0 ? `${path}?${query.toString()}` : path });
      }
    }
    return out;
  }

  it('answers a reader of open* with nothing of the hidden namespaces, on every GET route', async () => {
    const walk = await requests(false);
    const routes = new Set(walk.map((request) => request.route));
    expect(routes.size).toBeGreaterThan(30);
    const leaks: string[] = [];
    let adminSawHidden = 0;
    let readerOk = 0;
    for (const { url } of walk) {
      const asReader = await ctx.server.app.inject({ url, headers: { authorization: `Bearer ${reader}` } });
      expect(asReader.statusCode, url).toBeLessThan(500);
      if (asReader.statusCode === 200) readerOk++;
      if (MARKER.test(asReader.body) || MARKER.test(JSON.stringify(asReader.headers)))
        leaks.push(`${url}: ${asReader.body.slice(0, 300)}`);
      const asAdmin = await ctx.server.app.inject({ url, headers: { authorization: `Bearer ${admin}` } });
      if (MARKER.test(asAdmin.body)) adminSawHidden++;
    }
    expect(leaks).toEqual([]);
    // The walk reaches the data: the same requests show an admin the hidden side on many routes.
    expect(adminSawHidden).toBeGreaterThan(20);
    expect(readerOk).toBeGreaterThan(40);
  });

  it('answers a request naming the hidden side exactly as one naming nothing', async () => {
    const differences: string[] = [];
    for (const { url } of await requests(true)) {
      if (!MARKER.test(decodeURIComponent(url))) continue;
      const hidden = await ctx.server.app.inject({ url, headers: { authorization: `Bearer ${reader}` } });
      const missing = await ctx.server.app.inject({
        url: url.replace(/zzsecret/gi, 'openmissing'),
        headers: { authorization: `Bearer ${reader}` },
      });
      if (
        hidden.statusCode !== missing.statusCode ||
        hidden.body !== missing.body.replace(/openmissing/gi, 'zzsecret')
      )
        differences.push(
          `${url}: ${hidden.statusCode} ${hidden.body.slice(0, 200)} vs ${missing.statusCode} ${missing.body.slice(0, 200)}`,
        );
    }
    expect(differences).toEqual([]);
  });

  it('keeps the shape of the graph: an edge into a hidden namespace ends at a placeholder node', async () => {
    const url = `/api/v1/lineage?nodeId=${encodeURIComponent(`dataset:${OPEN_LAKE}:reports.daily`)}&depth=5`;
    const asAdmin = (
      await ctx.server.app.inject({ url, headers: { authorization: `Bearer ${admin}` } })
    ).json();
    const asReader = (
      await ctx.server.app.inject({ url, headers: { authorization: `Bearer ${reader}` } })
    ).json();
    type Node = { id: string; inEdges: unknown[]; outEdges: unknown[] };
    const shape = (graph: Node[]) =>
      graph
        .map((node) => [node.inEdges.length, node.outEdges.length])
        .sort((a, b) => a[0]! - b[0]! || a[1]! - b[1]!);
    expect(asReader.graph).toHaveLength(asAdmin.graph.length);
    expect(shape(asReader.graph)).toEqual(shape(asAdmin.graph));
    const placeholders = (asReader.graph as Node[]).filter((node) => node.id.includes('(redacted)'));
    expect(placeholders.map((node) => node.id.replace(/\d+$/, 'N')).sort()).toEqual([
      'dataset:(redacted):N',
      'dataset:(redacted):N',
      'job:(redacted):N',
    ]);
    expect(new Set(placeholders.map((node) => node.id)).size).toBe(3);
  });

  it('counts only what the reader may see', async () => {
    const get = async <T = { totalCount: number }>(url: string, key: string) =>
      (await ctx.server.app.inject({ url, headers: { authorization: `Bearer ${key}` } })).json<T>();
    expect((await get('/api/v1/jobs', reader)).totalCount).toBe(2);
    expect((await get('/api/v1/jobs', admin)).totalCount).toBeGreaterThan(2);
    expect(
      (await get<{ namespaces: { name: string }[] }>('/api/v1/namespaces', reader)).namespaces.map(
        (n) => n.name,
      ),
    ).toEqual([OPEN_LAKE, OPEN_JOBS].sort());
    const events = await get<{ totalCount: number; events: unknown[] }>(
      '/api/v1/events/lineage?kind=run&kind=dataset&kind=job',
      reader,
    );
    // Only OTHER_RUN's event names nothing hidden.
    expect(events.totalCount).toBe(1);
    expect(events.events).toHaveLength(1);
    const search = await get<{ totalCount: number; results: unknown[] }>('/api/v1/search?q=report', reader);
    expect(search.totalCount).toBe(search.results.length);
    const stats = await get<{ count: number }[]>('/api/v1/stats/jobs?period=DAY', reader);
    const statsAdmin = await get<{ count: number }[]>('/api/v1/stats/jobs?period=DAY', admin);
    expect(stats.at(-1)!.count).toBe(2);
    expect(statsAdmin.at(-1)!.count).toBeGreaterThan(2);
  });
});
