/**
 * A runnable walk-through: a small "export orders" job with a nested step, emitted through whatever the
 * OpenLineage configuration says (console by default; set OPENLINEAGE_URL to send to a server).
 *
 *   npx tsx packages/openlineage/examples/demo.ts
 *   OPENLINEAGE_URL=http://localhost:5000 npx tsx packages/openlineage/examples/demo.ts
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { OpenLineageClient } from '../src/index.js';
import {
  createClient,
  inputDataset,
  outputDataset,
  partitionedOutputDataset,
  postgresDataset,
  s3Dataset,
  schemaDatasetFacet,
  sqlJobFacet,
  track,
} from '../src/index.js';

/** Runs the demo job through `client`; returns the number of rows "exported". */
export async function runDemo(client: OpenLineageClient): Promise<number> {
  const orders = postgresDataset({ host: 'db', database: 'shop', schema: 'public', table: 'orders' });
  return track(
    {
      client,
      job: {
        namespace: 'demo',
        name: 'export_orders',
        facets: { sql: sqlJobFacet({ query: 'SELECT * FROM orders' }) },
      },
      inputs: [
        inputDataset({
          ...orders,
          facets: { schema: schemaDatasetFacet({ fields: [{ name: 'id', type: 'INT' }] }) },
        }),
      ],
      nominalTime: { start: new Date('2024-01-15T00:00:00Z') },
    },
    async (run) => {
      const rows = await track({ client, job: { namespace: 'demo', name: 'export_orders.write' } }, () => {
        run.addOutputs(
          partitionedOutputDataset(s3Dataset({ bucket: 'lake', key: 'orders/date=2024-01-15' })),
        );
        return Promise.resolve(3);
      });
      run.addOutputs(outputDataset(s3Dataset({ bucket: 'lake', key: 'orders/_SUCCESS' })));
      return rows;
    },
  );
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const client = createClient();
  const rows = await runDemo(client);
  await client.close(10_000);
  console.error(`exported ${rows} rows; ${JSON.stringify(client.stats())}`);
}
