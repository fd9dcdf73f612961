import { parseArgs } from 'node:util';
import { resolveConfig, strictFlagArgs } from '../config/server-config.js';
import { HeadwaterError } from '../core/errors.js';
import { loadForwardConfig } from '../streams/forwarder.js';
import { createProxy } from '../servers/proxy.js';
import { defineHelp } from './help.js';
import { ingestFlagHelp } from './serve.js';

const options = {
  config: { type: 'string' },
  port: { type: 'string' },
  host: { type: 'string' },
  strict: { type: 'string' },
  'spec-dir': { type: 'string' },
  'max-body-bytes': { type: 'string' },
  'max-batch-events': { type: 'string' },
  'log-level': { type: 'string' },
} as const;

/** `headwater proxy --help`. */
export const proxyHelp = defineHelp(options, {
  name: 'proxy',
  usage: [
    'proxy --config FILE [--port 5100] [--host 127.0.0.1] [--strict [structure|formats]] [--spec-dir DIR]',
  ],
  description:
    "The OpenLineage proxy: takes events on /api/v1/lineage and /api/v1/lineage/batch with the server's validation,\n" +
    'answers once each event is in the spool of every sink it is routed to, and delivers each sink (Kafka, HTTP\n' +
    'backends such as Headwater or DataHub, a rotating archive) on its own. FILE names the spool, sinks and routes\n' +
    '(see "Streams" in the README).',
  flags: {
    config: {
      value: 'FILE',
      env: 'HEADWATER_PROXY_CONFIG',
      text: 'spool, sinks and routes (YAML or JSON); needed',
    },
    port: { value: 'N', env: 'HEADWATER_PROXY_PORT', default: '5100', text: 'HTTP port' },
    host: { value: 'HOST', env: 'HEADWATER_HOST', default: '127.0.0.1', text: 'interface to listen on' },
    ...ingestFlagHelp,
  },
  examples: ['proxy --config proxy.yml --port 5100'],
});

/** `headwater proxy --config FILE`: the OpenLineage proxy, until SIGINT or SIGTERM. */
export async function proxyCommand(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args: strictFlagArgs(args),
    options,
    strict: true,
  });
  const file = values.config ?? process.env.HEADWATER_PROXY_CONFIG;
  if (file === undefined)
    throw new HeadwaterError(
      'INVALID_CONFIG',
      'headwater proxy needs --config FILE (sinks and routes; see the README).',
    );
  const config = resolveConfig({
    ...values,
    port: values.port ?? process.env.HEADWATER_PROXY_PORT ?? '5100',
  });
  const proxy = await createProxy(config, loadForwardConfig(file));
  const url = await proxy.listen();
  // The handlers go in before the line that says it listens, as in serve: a SIGTERM sent on reading it must reach them.
  const stopped = new Promise<void>((resolve) => {
    process.once('SIGINT', () => resolve());
    process.once('SIGTERM', () => resolve());
  });
  process.stdout.write(`headwater proxy listening on ${url} (sinks: ${proxy.forwarder.sinks.join(', ')})\n`);
  await stopped;
  await proxy.close();
  return 0;
}
