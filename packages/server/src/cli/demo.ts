import { parseArgs } from 'node:util';
import {
  DEMO_END_DATE,
  demoNames,
  demoScenario,
  type DemoEvent,
  type DemoScenario,
} from './demo-scenario.js';
import {
  CliError,
  DEFAULT_SERVER_URL,
  formatCount,
  processIo,
  resolveServerUrl,
  sendEvents,
  storedEventCount,
  type CommandIo,
} from './http.js';
import { clientFlags, defineHelp, formatHelp } from './help.js';

const options = {
  url: { type: 'string' },
  'end-date': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** `headwater demo --help`. */
export const demoHelp = defineHelp(options, {
  name: 'demo',
  usage: [`demo [--url ${DEFAULT_SERVER_URL}] [--end-date ${DEMO_END_DATE}]`],
  description:
    'Loads a week of a small revenue pipeline (S3 -> Airflow -> PostgreSQL -> dbt -> Looker) into a running\n' +
    'Headwater server through its HTTP API. The events are always the same, so running it again stores nothing new.',
  flags: {
    url: clientFlags.url,
    'end-date': { value: 'YYYY-MM-DD', default: DEMO_END_DATE, text: 'the last day of the demo week (UTC)' },
  },
  examples: ['demo', 'demo --url http://127.0.0.1:5000 --end-date 2025-03-14'],
});

const usage = formatHelp(demoHelp).trimEnd();

/** Counts of what the scenario describes, for the summary. */
function countEntities(events: readonly DemoEvent[]) {
  const runs = new Set<string>();
  const jobs = new Set<string>();
  const datasets = new Set<string>();
  const namespaces = new Set<string>();
  for (const event of events) {
    const named = 'dataset' in event ? [event.dataset] : [...event.inputs, ...event.outputs];
    for (const { namespace, name } of named) {
      datasets.add(`${namespace}:${name}`);
      namespaces.add(namespace);
    }
    if ('run' in event) {
      runs.add(event.run.runId);
      jobs.add(`${event.job.namespace}:${event.job.name}`);
      namespaces.add(event.job.namespace);
    }
  }
  return { runs: runs.size, jobs: jobs.size, datasets: datasets.size, namespaces: namespaces.size };
}

function summary(url: string, scenario: DemoScenario, newEvents: number | undefined): string {
  const counts = countEntities(scenario.events);
  // ':' and '/' may stand unescaped in a query string, and node ids read much better with them.
  const lineage = (nodeId: string, extra = '') =>
    `${url}/api/v1/lineage?nodeId=${encodeURIComponent(nodeId).replace(/%3A/g, ':').replace(/%2F/g, '/')}&depth=20${extra}`;
  const mart = `dataset:${demoNames.warehouse}:${demoNames.mart}`;
  const dashboard = `dataset:${demoNames.looker}:${demoNames.dashboard}`;
  const { failedRun } = scenario;
  const sent = formatCount(scenario.events.length);
  return [
    `Loaded the Headwater demo into ${url}:`,
    `  ${sent} events sent${newEvents === undefined ? '' : `, ${formatCount(newEvents)} new`} ` +
      '(identical events are stored once: running the demo again adds nothing)',
    `  ${counts.runs} runs of ${counts.jobs} jobs, ${counts.datasets} datasets, ${counts.namespaces} namespaces, ` +
      `${scenario.days[0]} to ${scenario.days.at(-1)} (UTC)`,
    `  ${scenario.schemaChangeDay}: column discount_amount added to ${demoNames.stagingOrders}`,
    `  ${scenario.days.at(-1)}: ${failedRun.namespace} ${failedRun.name} FAILED (run ${failedRun.runId}); ` +
      'the dbt model and the dashboard still ran, on stale data',
    '',
    'Try:',
    `  curl -s '${lineage(mart)}'`,
    `      the revenue mart, its inputs and its consumers`,
    `  curl -s '${lineage(dashboard, '&direction=upstream')}'`,
    `      everything the Revenue dashboard depends on, back to the S3 files`,
    `  curl -s '${url}/api/v1/namespaces/${failedRun.namespace}/jobs/${failedRun.name}/runs?limit=2'`,
    '      the last two runs of the orders load: FAILED on the last day, COMPLETED the day before',
    '',
  ].join('\n');
}

/**
 * `headwater demo [--url URL] [--end-date YYYY-MM-DD]`: loads the scenario of demo-scenario.ts into a running
 * server through POST /api/v1/lineage/batch, like any producer would, then prints what it loaded and a few
 * requests to try. Returns 0, 1 when the server is unreachable or refuses events, 2 for usage errors.
 *
 * @example
 * await demoCommand(['--url', 'http://127.0.0.1:5000']); // 0
 */
export async function demoCommand(args: string[], io: CommandIo = processIo): Promise<number> {
  let values: { url?: string | undefined; 'end-date'?: string | undefined; help?: boolean | undefined };
  try {
    ({ values } = parseArgs({
      args,
      options,
      strict: true,
    }));
  } catch (error) {
    io.stderr.write(`headwater demo: ${(error as Error).message}\n\n${usage}\n`);
    return 2;
  }
  if (values.help) {
    io.stdout.write(`${usage}\n`);
    return 0;
  }
  try {
    const url = resolveServerUrl(values.url, io.env);
    let scenario: DemoScenario;
    try {
      scenario = demoScenario(values['end-date'] === undefined ? {} : { endDate: values['end-date'] });
    } catch (error) {
      throw new CliError(`--end-date: ${(error as Error).message}`, 2, { cause: error });
    }
    const before = await storedEventCount(url);
    const { failures } = await sendEvents(
      url,
      scenario.events.map((event) => JSON.stringify(event)),
    );
    if (failures.length > 0) {
      // The scenario is valid OpenLineage; a server that refuses parts of it is misconfigured or not Headwater.
      const reasons = failures.slice(0, 5).map(({ index, reason }) => `  event ${index}: ${reason}`);
      throw new CliError(
        `the server at ${url} refused ${failures.length} of the ${scenario.events.length} demo events:\n${reasons.join('\n')}`,
      );
    }
    const after = before === undefined ? undefined : await storedEventCount(url);
    const newEvents = before === undefined || after === undefined ? undefined : after - before;
    io.stdout.write(summary(url, scenario, newEvents));
    return 0;
  } catch (error) {
    if (!(error instanceof CliError)) throw error;
    io.stderr.write(`headwater demo: ${error.message}\n`);
    return error.exitCode;
  }
}
