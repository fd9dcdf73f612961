/**
 * Services the server's tests and the benchmark both start beside a server. A package of its own because both
 * need them and neither may import the other's: the benchmark depends on the server, never the reverse.
 */
export { freePort } from './free-port.js';
export {
  kafkaCacheDir,
  kafkaJarsMissing,
  kafkaLibDir,
  startKafkaBroker,
  type KafkaBroker,
  type KafkaBrokerOptions,
  type KafkaListener,
} from './kafka-broker.js';
export { newWebhookSecret, signatureValid } from './webhook-signature.js';
