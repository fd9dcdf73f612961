import { parseArgs } from 'node:util';
import { resolveConfig, strictFlagArgs } from '../config.js';
import { HeadwaterError } from '../errors.js';
import { loadForwardConfig } from '../streams/forwarder.js';
import { createProxy } from '../streams/proxy.js';

/** `headwater proxy --config FILE`: the OpenLineage proxy, until SIGINT or SIGTERM. */
export async function proxyCommand(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args: strictFlagArgs(args),
    options: {
      config: { type: 'string' },
      port: { type: 'string' },
      host: { type: 'string' },
      strict: { type: 'string' },
      'spec-dir': { type: 'string' },
      'max-body-bytes': { type: 'string' },
      'max-batch-events': { type: 'string' },
      'log-level': { type: 'string' },
    },
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
  const proxy = createProxy(config, loadForwardConfig(file));
  const url = await proxy.listen();
  process.stdout.write(`headwater proxy listening on ${url} (sinks: ${proxy.forwarder.sinks.join(', ')})\n`);
  await new Promise<void>((resolve) => {
    process.once('SIGINT', () => resolve());
    process.once('SIGTERM', () => resolve());
  });
  await proxy.close();
  return 0;
}
