import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  OpenLineageConfigError,
  configFromEnv,
  createTransportFromConfig,
  deepMerge,
  resolveConfig,
} from './config.js';
import { runEvent } from './events.js';
import type { RunEvent } from './generated/model.js';
import { createInMemoryTransport } from './transports/in-memory-transport.js';
import type { LineageServer } from './test-support/lineage-server.js';
import { startLineageServer } from './test-support/lineage-server.js';

let dir: string;
let cwd: string;
let home: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'openlineage-config-'));
  cwd = path.join(dir, 'cwd');
  home = path.join(dir, 'home');
  await mkdir(cwd);
  await mkdir(path.join(home, '.openlineage'), { recursive: true });
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const sources = (env: Record<string, string> = {}) => ({ env, cwd, homeDir: home });

/** The message of the OpenLineageConfigError `fn` throws. */
function configError(fn: () => unknown): { key: string; message: string } {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(OpenLineageConfigError);
    return { key: (error as OpenLineageConfigError).key, message: (error as Error).message };
  }
  throw new Error('expected an OpenLineageConfigError');
}

describe('configFromEnv', () => {
  it('splits on __, lowercases keys and JSON-parses values', () => {
    expect(
      configFromEnv({
        OPENLINEAGE__TRANSPORT__TYPE: 'http',
        OPENLINEAGE__TRANSPORT__URL: 'http://localhost:5000',
        OPENLINEAGE__TRANSPORT__TIMEOUT: '2.5',
        OPENLINEAGE__TRANSPORT__COMPRESSION: 'gzip',
        OPENLINEAGE__TRANSPORT__AUTH: '{"type":"api_key","apiKey":"K"}',
        OPENLINEAGE__TRANSPORT__CUSTOM_HEADERS__X_ONE: '1',
        OPENLINEAGE__FACETS__ENVIRONMENT_VARIABLES: '["USER","HOME"]',
        OPENLINEAGE_URL: 'ignored here',
      }),
    ).toEqual({
      transport: {
        type: 'http',
        url: 'http://localhost:5000',
        timeout: 2.5,
        compression: 'gzip',
        auth: { type: 'api_key', apiKey: 'K' },
        custom_headers: { x_one: 1 },
      },
      facets: { environment_variables: ['USER', 'HOME'] },
    });
  });

  it('lets a shorter variable win over a longer one, as in Python', () => {
    expect(
      configFromEnv({ OPENLINEAGE__TRANSPORT__TYPE: 'http', OPENLINEAGE__TRANSPORT: '{"type":"console"}' }),
    ).toEqual({ transport: { type: 'console' } });
  });
});

describe('resolveConfig', () => {
  it('merges explicit config over the YAML file over OPENLINEAGE__ variables', async () => {
    await writeFile(
      path.join(cwd, 'openlineage.yml'),
      'transport:\n  type: http\n  url: http://from-file:5000\n  timeout: 3\nfacets:\n  spark_unknown:\n    disabled: true\n',
    );
    const resolved = resolveConfig(
      { transport: { url: 'http://explicit:5000' } },
      sources({
        OPENLINEAGE__TRANSPORT__URL: 'http://env:5000',
        OPENLINEAGE__TRANSPORT__ENDPOINT: 'api/v2/lineage',
      }),
    );
    expect(resolved.configFile).toBe(path.join(cwd, 'openlineage.yml'));
    expect(resolved.config).toEqual({
      transport: { type: 'http', url: 'http://explicit:5000', timeout: 3, endpoint: 'api/v2/lineage' },
      facets: { spark_unknown: { disabled: true } },
    });
  });

  it('finds the YAML file at OPENLINEAGE_CONFIG, then ./openlineage.yml, then ~/.openlineage/openlineage.yml', async () => {
    const homeFile = path.join(home, '.openlineage', 'openlineage.yml');
    await writeFile(homeFile, 'transport: {type: console}\n');
    expect(resolveConfig(undefined, sources()).configFile).toBe(homeFile);
    await writeFile(path.join(cwd, 'openlineage.yml'), 'transport: {type: noop}\n');
    expect(resolveConfig(undefined, sources()).config).toEqual({ transport: { type: 'noop' } });
    const explicitFile = path.join(dir, 'custom.yml');
    await writeFile(explicitFile, 'transport: {type: file, log_file_path: x.ndjson}\n');
    expect(resolveConfig(undefined, sources({ OPENLINEAGE_CONFIG: explicitFile })).configFile).toBe(
      explicitFile,
    );
    // A missing OPENLINEAGE_CONFIG file falls through to the next place.
    expect(
      resolveConfig(undefined, sources({ OPENLINEAGE_CONFIG: path.join(dir, 'missing.yml') })).configFile,
    ).toBe(path.join(cwd, 'openlineage.yml'));
  });

  it('ignores an empty file and rejects invalid YAML naming the file', async () => {
    await writeFile(path.join(cwd, 'openlineage.yml'), '');
    expect(resolveConfig(undefined, sources()).config).toEqual({});
    await writeFile(path.join(cwd, 'openlineage.yml'), 'transport: [unclosed\n');
    const error = configError(() => resolveConfig(undefined, sources()));
    expect(error.key).toBe(path.join(cwd, 'openlineage.yml'));
    expect(error.message).toContain('is not valid YAML');
  });

  it('reads OPENLINEAGE_DISABLED case-insensitively', () => {
    expect(resolveConfig(undefined, sources({ OPENLINEAGE_DISABLED: ' TRUE ' })).disabled).toBe(true);
    expect(resolveConfig(undefined, sources({ OPENLINEAGE_DISABLED: 'yes' })).disabled).toBe(false);
  });

  it('aliases OPENLINEAGE_URL as the default_http child of a composite, and for async_http', () => {
    const env = {
      OPENLINEAGE_URL: 'http://backend:5000',
      OPENLINEAGE_API_KEY: 'K',
      OPENLINEAGE_ENDPOINT: 'api/v1/lineage',
      OPENLINEAGE__TRANSPORT__TYPE: 'async_http',
    };
    const { config } = resolveConfig(undefined, sources(env));
    expect(config).toEqual({
      transport: {
        type: 'async_http',
        url: 'http://backend:5000',
        endpoint: 'api/v1/lineage',
        auth: { type: 'api_key', apiKey: 'K' },
        transports: {
          default_http: {
            type: 'http',
            url: 'http://backend:5000',
            endpoint: 'api/v1/lineage',
            auth: { type: 'api_key', apiKey: 'K' },
          },
        },
      },
    });
  });

  it('deep-merges mappings only', () => {
    expect(deepMerge({ a: { b: 1, c: [1] } }, { a: { c: [2], d: 3 } })).toEqual({
      a: { b: 1, c: [2], d: 3 },
    });
  });
});

describe('createTransportFromConfig', () => {
  let server: LineageServer;
  beforeEach(async () => {
    server = await startLineageServer();
  });
  afterEach(async () => {
    await server.close();
  });
  const event = (): RunEvent => runEvent({ eventType: 'START', job: { namespace: 'n', name: 'j' } });

  it('builds an http transport from the Python key names', async () => {
    const transport = createTransportFromConfig({
      type: 'http',
      url: server.url,
      endpoint: 'api/v1/lineage',
      timeout: 5,
      auth: { type: 'api_key', api_key: 'K' },
      compression: 'gzip',
      custom_headers: { 'X-Env': 'test' },
      retry: { total: 0, backoff_factor: 0.01, status_forcelist: [500] },
    });
    expect((await transport.emit(event())).status).toBe('success');
    expect(server.requests[0]!.headers.authorization).toBe('Bearer K');
    expect(server.requests[0]!.headers['x-env']).toBe('test');
    expect(server.requests[0]!.headers['content-encoding']).toBe('gzip');
    await transport.close!(1000);
  });

  it('builds async_http with the batch endpoint', async () => {
    const transport = createTransportFromConfig({
      type: 'async_http',
      url: server.url,
      max_queue_size: 10,
      batch_size: 2,
      flush_interval: 0.01,
      batch: true,
    });
    await transport.emit(event());
    await transport.emit(event());
    expect(await transport.flush!(5000)).toBe(true);
    expect(server.requests.map((r) => r.url)).toEqual(['/api/v1/lineage/batch']);
    expect(server.requests[0]!.body).toHaveLength(2);
    await transport.close!(1000);
  });

  it('builds composite transports from a list or a map, ordered by priority when asked', async () => {
    const seen: string[] = [];
    const factories = {
      memo: (config: Record<string, unknown>) => {
        const memory = createInMemoryTransport();
        return {
          emit: (e: Parameters<typeof memory.emit>[0]) => {
            seen.push(String(config.label));
            return memory.emit(e);
          },
        };
      },
    };
    const composite = createTransportFromConfig(
      {
        type: 'composite',
        continue_on_success: false,
        sort_transports: true,
        transports: {
          low: { type: 'memo', label: 'low', priority: 1 },
          high: { type: 'memo', label: 'high', priority: 5 },
        },
      },
      { transportFactories: factories },
    );
    expect((await composite.emit(event())).status).toBe('success');
    expect(seen).toEqual(['high']);
    const list = createTransportFromConfig(
      {
        type: 'composite',
        transports: [
          { type: 'memo', label: 'a' },
          { type: 'memo', label: 'b' },
        ],
      },
      { transportFactories: factories },
    );
    seen.length = 0;
    await list.emit(event());
    expect(seen.sort()).toEqual(['a', 'b']);
  });

  it('builds a transform transport with the Python JobNamespaceReplaceTransformer', async () => {
    const sink = createInMemoryTransport();
    const transport = createTransportFromConfig(
      {
        type: 'transform',
        transport: { type: 'sink' },
        transformer_class: 'openlineage.client.transport.transform.JobNamespaceReplaceTransformer',
        transformer_properties: { new_job_namespace: 'prod' },
      },
      { transportFactories: { sink: () => sink } },
    );
    await transport.emit(event());
    expect(sink.runEvents()[0]!.job.namespace).toBe('prod');
  });

  it('throws once, naming the key, for bad configuration', () => {
    expect(configError(() => createTransportFromConfig({ type: 'msk_iam' }))).toMatchObject({
      key: 'transport.type',
      message: expect.stringContaining('unknown transport type "msk_iam"') as string,
    });
    expect(configError(() => createTransportFromConfig({ type: 'kafka' })).key).toBe('transport.topic');
    expect(configError(() => createTransportFromConfig({ type: 'http' })).key).toBe('transport.url');
    expect(configError(() => createTransportFromConfig({ type: 'http', url: 'localhost:5000' })).key).toBe(
      'transport.url',
    );
    expect(
      configError(() => createTransportFromConfig({ type: 'http', url: server.url, timeout: 'abc' })),
    ).toMatchObject({
      key: 'transport.timeout',
      message: expect.stringContaining('must be a number greater than 0, got "abc"') as string,
    });
    expect(
      configError(() => createTransportFromConfig({ type: 'http', url: server.url, urll: 'x' })),
    ).toMatchObject({
      key: 'transport.urll',
      message: expect.stringContaining('unknown key') as string,
    });
    expect(
      configError(() => createTransportFromConfig({ type: 'http', url: server.url, auth: { type: 'jwt' } }))
        .key,
    ).toBe('transport.auth.type');
    expect(
      configError(() =>
        createTransportFromConfig({
          type: 'composite',
          transports: [{ type: 'http', url: server.url, timeout: -1 }],
        }),
      ).key,
    ).toBe('transport.transports.0.timeout');
    expect(configError(() => createTransportFromConfig({ type: 'file' })).key).toBe(
      'transport.log_file_path',
    );
    expect(
      configError(() => createTransportFromConfig({ type: 'async_http', url: server.url, max_queue_size: 0 }))
        .key,
    ).toBe('transport.max_queue_size');
    expect(
      configError(() =>
        createTransportFromConfig({
          type: 'transform',
          transport: { type: 'console' },
          transformer_class: 'x.Y',
        }),
      ).key,
    ).toBe('transport.transformer_class');
  });

  it('accepts Python-only keys with a warning', () => {
    const warnings: string[] = [];
    createTransportFromConfig(
      { type: 'http', url: server.url, verify: false },
      { onWarning: (w) => warnings.push(w) },
    );
    expect(warnings).toEqual([
      'OpenLineage configuration: transport.verify is not supported by the TypeScript client and is ignored',
    ]);
  });
});
