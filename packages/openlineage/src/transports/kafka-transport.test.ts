import { describe, expect, it } from 'vitest';
import { createTransportFromConfig, OpenLineageConfigError } from '../config.js';
import { kafkaConnectionOptions, kafkaMessageKey } from './kafka-transport.js';

const run = (facets: Record<string, unknown> = {}) => ({
  eventType: 'START',
  eventTime: '2025-01-01T00:00:00Z',
  producer: 'p',
  schemaURL: 'https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent',
  run: { runId: '0190d4c8-0000-7000-8000-000000000001', facets },
  job: { namespace: 'ns', name: 'task' },
});

describe('kafkaMessageKey', () => {
  it('keys a RunEvent by its root job, else its parent job, else its own job', () => {
    const parent = { run: { runId: 'x' }, job: { namespace: 'p', name: 'dag' } };
    expect(kafkaMessageKey(run())).toBe('run:ns/task');
    expect(kafkaMessageKey(run({ parent }))).toBe('run:p/dag');
    expect(
      kafkaMessageKey(
        run({ parent: { ...parent, root: { run: { runId: 'r' }, job: { namespace: 'r', name: 'root' } } } }),
      ),
    ).toBe('run:r/root');
    // A parent facet without a usable job falls back to the run's own job, as the Python transport does.
    expect(
      kafkaMessageKey(run({ parent: { run: { runId: 'x' }, job: { namespace: '', name: 'dag' } } })),
    ).toBe('run:ns/task');
  });

  it('keys DatasetEvents and JobEvents by their dataset and job', () => {
    expect(kafkaMessageKey({ eventTime: 't', producer: 'p', dataset: { namespace: 'db', name: 't1' } })).toBe(
      'dataset:db/t1',
    );
    expect(kafkaMessageKey({ eventTime: 't', producer: 'p', job: { namespace: 'ns', name: 'j' } })).toBe(
      'job:ns/j',
    );
    expect(kafkaMessageKey({ eventTime: 't' })).toBeUndefined();
  });
});

describe('kafkaConnectionOptions', () => {
  it('maps librdkafka keys to the connection', () => {
    expect(
      kafkaConnectionOptions(
        {
          'bootstrap.servers': 'a:9092, b:9093',
          'security.protocol': 'SASL_PLAINTEXT',
          'sasl.mechanism': 'SCRAM-SHA-512',
          'sasl.username': 'u',
          'sasl.password': 'pw',
          'client.id': 'me',
        },
        'config',
      ),
    ).toEqual({
      clientId: 'me',
      bootstrapBrokers: ['a:9092', 'b:9093'],
      sasl: { mechanism: 'SCRAM-SHA-512', username: 'u', password: 'pw' },
    });
    expect(
      kafkaConnectionOptions({ 'bootstrap.servers': 'a:1', 'security.protocol': 'SSL' }, 'c').tls,
    ).toEqual({
      rejectUnauthorized: true,
    });
  });

  it('names the key that is wrong', () => {
    expect(() => kafkaConnectionOptions({}, 'config')).toThrow(/config\.bootstrap\.servers is required/);
    expect(() => kafkaConnectionOptions({ 'bootstrap.servers': 'nohost' }, 'c')).toThrow(
      /expected host:port/,
    );
    expect(() =>
      kafkaConnectionOptions(
        { 'bootstrap.servers': 'a:1', 'security.protocol': 'SASL_SSL', 'sasl.username': 'u' },
        'c',
      ),
    ).toThrow(/c\.sasl\.password is required/);
    expect(() =>
      kafkaConnectionOptions(
        { 'bootstrap.servers': 'a:1', 'sasl.mechanism': 'GSSAPI', 'security.protocol': 'SASL_SSL' },
        'c',
      ),
    ).toThrow(/sasl\.mechanism must be one of PLAIN, SCRAM-SHA-256, SCRAM-SHA-512/);
    expect(() => kafkaConnectionOptions({ 'bootstrap.servers': 'a:1', 'bogus.key': 'x' }, 'c')).toThrow(
      /c\.bogus\.key is not a Kafka setting/,
    );
    const warnings: string[] = [];
    kafkaConnectionOptions({ 'bootstrap.servers': 'a:1', 'linger.ms': '5' }, 'c', (message) =>
      warnings.push(message),
    );
    expect(warnings).toEqual(['c.linger.ms is accepted but has no effect in this client']);
  });
});

describe('type: kafka in the Python configuration shape', () => {
  it('builds a transport and reports bad keys with their path', () => {
    const transport = createTransportFromConfig({
      type: 'kafka',
      topic: 'lineage',
      config: { 'bootstrap.servers': '127.0.0.1:9092' },
      messageKey: 'fixed',
      flush: true,
    });
    expect(typeof transport.emit).toBe('function');
    expect(() => createTransportFromConfig({ type: 'kafka', topic: 'lineage' })).toThrow(
      OpenLineageConfigError,
    );
    expect(() =>
      createTransportFromConfig({ type: 'kafka', topic: 'lineage', config: { 'bootstrap.servers': '' } }),
    ).toThrow('OpenLineage configuration: transport.config.bootstrap.servers: is required');
  });
});
