import { expect, it } from 'vitest';
import { createClient, createInMemoryTransport } from '../src/index.js';
import { createValidator } from '../src/validation/index.js';
import { runDemo } from '../examples/demo.js';

it('the README demo emits valid, nested runs', async () => {
  const transport = createInMemoryTransport();
  const client = createClient({ transport, sources: { env: {}, cwd: '/', homeDir: '/' } });
  expect(await runDemo(client)).toBe(3);
  expect(await client.close()).toBe(true);
  const events = transport.runEvents();
  expect(events.map((e) => `${e.job.name}:${e.eventType}`).sort()).toEqual([
    'export_orders.write:COMPLETE',
    'export_orders.write:START',
    'export_orders:COMPLETE',
    'export_orders:START',
  ]);
  const validator = createValidator();
  for (const event of events) expect(validator.validate(event).errors).toEqual([]);
  const complete = events.find((e) => e.job.name === 'export_orders' && e.eventType === 'COMPLETE')!;
  expect(complete.outputs!.map((d) => d.name)).toEqual(['orders', 'orders/_SUCCESS']);
});
