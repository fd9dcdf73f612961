import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../src/store/db.js';
import { backends, startApp } from './helpers/backends.js';

type Started = Awaited<ReturnType<typeof startApp>>;

/** A valid event writing `dataset`. */
function good(dataset: string): Record<string, unknown> {
  return {
    eventType: 'COMPLETE',
    eventTime: '2025-03-01T00:00:00Z',
    producer: 'https://example.com/hostile-test',
    run: { runId: randomUUID() },
    job: { namespace: 'hostile', name: `writes_${dataset}` },
    outputs: [{ namespace: 'db', name: dataset }],
  };
}

/** Nests `{a: {a: ... }}` `depth` deep, as JSON text (JSON.stringify itself would overflow the stack). */
const nested = (depth: number) => '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);

/**
 * Each hostile class as the JSON text of one event, with what its 422 must say. Texts are built by hand where
 * JSON.stringify could not make them (lone surrogates are written as escapes).
 */
const HOSTILE: Record<string, { text: () => string; says: RegExp }> = {
  'a facet nested 10,000 deep': {
    text: () =>
      JSON.stringify(good('x')).replace(
        '"run":{',
        `"run":{"facets":{"deep":{"_producer":"p","_schemaURL":"https://x/y","v":${nested(10_000)}}},`,
      ),
    says: /\$\.run\.facets\.deep\.v(\.a)+: is nested deeper than 64 levels/,
  },
  'a lone surrogate in a job name': {
    text: () => JSON.stringify(good('x')).replace('"name":"writes_x"', '"name":"bad\\ud800name"'),
    says: /\$\.job\.name: the text contains an unpaired UTF-16 surrogate/,
  },
  'a dataset name of a million characters': {
    text: () => JSON.stringify(good('n'.repeat(1_000_000))),
    says: /\$\.outputs\[0\]\.name: is 1000000 bytes long; names may have at most 1024 bytes/,
  },
  'an event with 100,000 inputs': {
    text: () =>
      JSON.stringify({
        ...good('x'),
        inputs: Array.from({ length: 100_000 }, (_, i) => ({ namespace: 'db', name: `in${i}` })),
      }),
    says: /\$\.inputs: the event names 100000 inputs and 1 outputs; at most 5000 datasets/,
  },
  'a facet of 2 MiB': {
    text: () =>
      JSON.stringify({
        ...good('x'),
        run: {
          runId: randomUUID(),
          facets: { big: { _producer: 'p', _schemaURL: 'https://x/y', v: 'b'.repeat(2 * 1024 * 1024) } },
        },
      }),
    says: /\$\.run\.facets\.big: is \d+ bytes of JSON; a facet may have at most 1048576 bytes/,
  },
};

describe.each(backends())('hostile events on the $name store', (backend) => {
  let ctx: Started;

  beforeAll(async () => {
    ctx = await startApp(backend, { maxBodyBytes: 32 * 1024 * 1024 });
  });
  afterAll(async () => {
    await ctx?.stop();
  });

  const post = (path: string, body: string, type = 'application/json') =>
    ctx.request(`/api/v1/lineage${path}`, { method: 'POST', headers: { 'content-type': type }, body });
  const exists = async (dataset: string) =>
    (await ctx.request(`/api/v1/namespaces/db/datasets/${dataset}`)).status === 200;

  for (const [name, { text, says }] of Object.entries(HOSTILE)) {
    it(`rejects ${name} alone with a 422 naming the path and the limit`, async () => {
      const response = await post('', text());
      expect(response.status).toBe(422);
      const body = (await response.json()) as { error: string; errors: string[] };
      expect(body.error).toBe('INVALID_EVENT');
      expect(body.errors.join('\n')).toMatch(says);
    });

    it(`stores the valid events of a batch holding ${name}, and lists it in failed_events`, async () => {
      const before = `before_${randomUUID().slice(0, 8)}`;
      const after = `after_${randomUUID().slice(0, 8)}`;
      const batch = `[${JSON.stringify(good(before))},${text()},${JSON.stringify(good(after))}]`;
      const response = await post('/batch', batch);
      expect(response.status).toBe(200);
      const reply = (await response.json()) as {
        status: string;
        summary: Record<string, number>;
        failed_events: { index: number; reason: string; retriable: boolean }[];
      };
      expect(reply.status).toBe('partial_success');
      expect(reply.summary).toEqual({
        received: 3,
        successful: 2,
        failed: 1,
        retriable: 0,
        non_retriable: 1,
      });
      expect(reply.failed_events).toHaveLength(1);
      expect(reply.failed_events[0]).toMatchObject({ index: 1, retriable: false });
      expect(reply.failed_events[0]!.reason).toMatch(says);
      expect([await exists(before), await exists(after)]).toEqual([true, true]);
    });
  }

  it('finds the one event the store refuses inside a batch and stores the others', async () => {
    const db = ctx.server.db as { -readonly [K in keyof Db]: Db[K] };
    const query = db.query.bind(db);
    db.query = (sql: string, params?: readonly unknown[], name?: string) =>
      sql.startsWith('WITH') && JSON.stringify(params ?? []).includes('refused_by_store')
        ? Promise.reject(new Error('value too long for the store'))
        : query(sql, params, name);
    try {
      const events = ['kept_1', 'refused_by_store', 'kept_2', 'kept_3'].map((name) =>
        JSON.stringify(good(name)),
      );
      const response = await post('/batch', `[${events.join(',')}]`);
      const reply = (await response.json()) as {
        summary: Record<string, number>;
        failed_events: { index: number; reason: string; retriable: boolean }[];
      };
      expect(reply.summary).toMatchObject({ received: 4, successful: 3, failed: 1, non_retriable: 1 });
      expect(reply.failed_events).toEqual([
        {
          index: 1,
          reason: 'the store could not take this event: value too long for the store',
          retriable: false,
        },
      ]);
    } finally {
      db.query = query;
    }
    expect([await exists('kept_1'), await exists('kept_2'), await exists('kept_3')]).toEqual([
      true,
      true,
      true,
    ]);
    expect(await exists('refused_by_store')).toBe(false);
  });
});
