import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backends, startServer } from './helpers/backends.js';
import { conformanceFiles, hasConformance, readEvents } from './helpers/conformance.js';

// Validation does not depend on the store; the embedded one is enough here.
const [embedded] = backends();

// Strict mode reads the published schemas from the shared folder, and these cases are its real events.
describe.skipIf(!hasConformance())('strict mode', () => {
  let ctx: Awaited<ReturnType<typeof startServer>>;
  const post = (event: unknown) =>
    fetch(`${ctx.url}/api/v1/lineage`, {
      method: 'POST',
      body: JSON.stringify(event),
      headers: { 'content-type': 'application/json' },
    });

  beforeAll(async () => {
    ctx = await startServer(embedded!, { strict: true });
  });
  afterAll(async () => {
    await ctx?.stop();
  });

  it('rejects the fluentd negative cases with 422 naming the facet', async () => {
    const expected: Record<string, string> = {
      'event_invalid_dataset_facet.json': '$.outputs[0].facets.ownership.owners[0].name',
      'event_invalid_input_dataset_facet.json': '$.inputs[0].inputFacets.dataQualityMetrics.columnMetrics',
      'event_invalid_output_dataset_facet.json': '$.outputs[0].outputFacets.outputStatistics.rowCount',
      'event_invalid_job_facet.json': '$.job.facets.ownership.owners[0].name',
      'event_invalid_run_facet.json': '$.run.facets.parent.run.runId',
      'event_no_run_id.json': '$.run.runId',
    };
    for (const [file, path] of Object.entries(expected)) {
      const [event] = readEvents(`fluentd-proxy/${file}`);
      const response = await post(event);
      const body = (await response.json()) as { errors: string[] };
      expect({
        file,
        status: response.status,
        paths: body.errors.map((error) => error.split(': ')[0]),
      }).toEqual({
        file,
        status: 422,
        paths: [path],
      });
    }
  });

  it('accepts every event the manifest marks valid and rejects the others', async () => {
    for (const file of conformanceFiles(['valid'])) {
      for (const event of readEvents(file))
        expect({ file, status: (await post(event)).status }).toEqual({ file, status: 201 });
    }
    for (const file of conformanceFiles(['facet-invalid', 'invalid'])) {
      for (const event of readEvents(file))
        expect({ file, status: (await post(event)).status }).toEqual({ file, status: 422 });
    }
  });
});
