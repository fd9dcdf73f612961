import { describe, expect, it } from 'vitest';
import { resolveConfig } from '../config/server-config.js';

describe('Kafka ingest configuration of serve', () => {
  it('is off without brokers, and reads flags before the environment', () => {
    expect(resolveConfig({}, {}).kafka).toBeUndefined();
    const kafka = resolveConfig(
      { 'kafka-brokers': 'k1:9092,k2:9092', 'kafka-topic': ['a', 'b,c'] },
      { HEADWATER_KAFKA_BROKERS: 'ignored:1', HEADWATER_KAFKA_GROUP: 'team' },
    ).kafka;
    expect(kafka).toEqual({
      topics: ['a', 'b', 'c'],
      groupId: 'team',
      deadLetterTopic: 'headwater.dlq',
      connection: { clientId: 'headwater', bootstrapBrokers: ['k1:9092', 'k2:9092'] },
    });
  });

  it('takes SASL and TLS from the environment; credentials imply SASL', () => {
    const kafka = resolveConfig(
      {},
      {
        HEADWATER_KAFKA_BROKERS: 'k:9093',
        HEADWATER_KAFKA_TOPICS: 'lineage',
        HEADWATER_KAFKA_SASL_MECHANISM: 'SCRAM-SHA-256',
        HEADWATER_KAFKA_SASL_USERNAME: 'hw',
        HEADWATER_KAFKA_SASL_PASSWORD: 'secret',
      },
    ).kafka;
    expect(kafka?.connection.sasl).toEqual({
      mechanism: 'SCRAM-SHA-256',
      username: 'hw',
      password: 'secret',
    });
    expect(kafka?.connection.tls).toBeUndefined();
  });

  it('names the flag or variable that is wrong', () => {
    expect(() => resolveConfig({ 'kafka-topic': ['a'] }, {})).toThrow('--kafka-topic needs --kafka-brokers');
    expect(() => resolveConfig({ 'kafka-brokers': 'k:1' }, {})).toThrow(
      /--kafka-brokers is set but no topic is/,
    );
    expect(() => resolveConfig({}, { HEADWATER_KAFKA_BROKERS: 'nope', HEADWATER_KAFKA_TOPICS: 't' })).toThrow(
      /HEADWATER_KAFKA_BROKERS has "nope"; expected host:port/,
    );
    expect(() =>
      resolveConfig({ 'kafka-brokers': 'k:1', 'kafka-topic': ['t'], 'kafka-sasl-username': 'u' }, {}),
    ).toThrow('--kafka-sasl-password is required with security.protocol SASL_PLAINTEXT.');
    expect(() =>
      resolveConfig(
        {
          'kafka-brokers': 'k:1',
          'kafka-topic': ['t'],
          'kafka-ssl-ca': '/no/such/ca.pem',
          'kafka-security-protocol': 'SSL',
        },
        {},
      ),
    ).toThrow(/--kafka-ssl-ca cannot be read/);
    expect(() =>
      resolveConfig({ 'kafka-brokers': 'k:1', 'kafka-topic': ['t', 'headwater.dlq'] }, {}),
    ).toThrow(/dead-letter topic headwater.dlq is also a source topic/);
  });
});
