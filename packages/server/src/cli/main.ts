#!/usr/bin/env node
import { HeadwaterError } from '../core/errors.js';
import { formatHelp, type CommandHelp } from './help.js';
import { CliError } from './http.js';
import { nodeVersionProblem } from './node-version.js';

const usage = `headwater: an OpenLineage lineage server

Usage:
  headwater serve [--port 5000] [--host 127.0.0.1] [--data-dir ./.headwater] [--database-url URL]
                  [--strict [structure|formats]] [--spec-dir DIR]   (strict: the bundled OpenLineage schemas;
                  structure = required fields, types, enums; formats = also date-time, uuid, uri)
                  [--advertise-url URL]   (replicas on one PostgreSQL: where the others reach this one)
                  [--kafka-brokers HOST:PORT --kafka-topic TOPIC... --kafka-group G] [--forward-config FILE]
                  [--alerts-config FILE]   (incidents: channels, owners and rules in YAML)
  headwater proxy --config FILE [--port 5100] [--host 127.0.0.1] [--strict [structure|formats]] [--spec-dir DIR]
  headwater demo [--url http://127.0.0.1:5000] [--end-date 2025-03-14]
  headwater ingest FILE... [--url http://127.0.0.1:5000] [--batch-size 500]
  headwater lineage NODE [--direction upstream|downstream|both] [--depth 20] [--as-of TIME] [--json] [--url URL]
  headwater root-cause NODE [--at TIME] [--json] [--url URL]
  headwater impact NODE [--change latest|removed|typeChanged|none] [--fail-on breaking|any] [--json] [--url URL]
  headwater classified TAG [--fail-on coarse|any] [--json] [--url URL]
  headwater policy check -f policies.yaml [--fail-on any] [--json] [--url URL]
  headwater journey NODE [--from TIME --to TIME] [--direction downstream|upstream] [--tags pii]
                    [--jurisdiction PATTERN=NAME]... [--format markdown|json|csv|html] [--url URL]
  headwater schema-diff DATASET [--from VERSION --to VERSION] [--json] [--url URL]
  headwater diff RUN_A RUN_B | NODE --from TIME [--to TIME] [--json] [--url URL]
  headwater declared JOB [--at TIME] [--fail-on any] [--json] [--url URL]
  headwater preview create NAME --base NS --job-namespace NS [--map FROM=TO]... [--pr N] [--ttl 14d]
                    | diff NAME [--fail-on breaking|any] [--format table|markdown|json] | list | show NAME | delete NAME
  headwater alias add ALIAS DATASET | remove ALIAS | list [--json] [--url URL]   (dataset:<namespace>:<name>)
  headwater incidents list [--status S] [--fail-on unresolved] | show ID | ack ID | resolve ID [--note TEXT] [--url URL]
  headwater alerts dry-run [--url URL] | check FILE
  headwater keys create --name NAME --role reader|writer|admin --namespaces PATTERN [--expires 90d] | list | revoke ID
  headwater audit [--since TIME] [--actor key:ID] [--action PREFIX] [--json]
  headwater backup --out FILE --url URL | [--data-dir DIR | --database-url URL]
  headwater restore --in FILE (--data-dir NEW_DIR | --database-url URL) [--force]
  headwater help [COMMAND]        the flags of a command, with their defaults and an example
  headwater COMMAND --help        the same`;

/** A command: what runs it and its help. */
interface Command {
  readonly run: (args: string[]) => Promise<number>;
  readonly help: CommandHelp;
}

// Loaded when named, so that `headwater help` and the client commands do not load the server (fastify, the
// stores, the Kafka client), and so that the Node.js version is checked before the Kafka client is loaded.
const commands: Record<string, () => Promise<Command>> = {
  serve: async () => {
    const m = await import('./serve.js');
    return { run: m.serveCommand, help: m.serveHelp };
  },
  proxy: async () => {
    const m = await import('./proxy.js');
    return { run: m.proxyCommand, help: m.proxyHelp };
  },
  demo: async () => {
    const m = await import('./demo.js');
    return { run: (args) => m.demoCommand(args), help: m.demoHelp };
  },
  ingest: async () => {
    const m = await import('./ingest.js');
    return { run: (args) => m.ingestCommand(args), help: m.ingestHelp };
  },
  lineage: async () => {
    const m = await import('./lineage.js');
    return { run: (args) => m.lineageCommand(args), help: m.lineageHelp };
  },
  'root-cause': async () => {
    const m = await import('./root-cause.js');
    return { run: (args) => m.rootCauseCommand(args), help: m.rootCauseHelp };
  },
  impact: async () => {
    const m = await import('./impact.js');
    return { run: (args) => m.impactCommand(args), help: m.impactHelp };
  },
  classified: async () => {
    const m = await import('./classified.js');
    return { run: (args) => m.classifiedCommand(args), help: m.classifiedHelp };
  },
  'schema-diff': async () => {
    const m = await import('./schema-diff.js');
    return { run: (args) => m.schemaDiffCommand(args), help: m.schemaDiffHelp };
  },
  diff: async () => {
    const m = await import('./diff.js');
    return { run: (args) => m.diffCommand(args), help: m.diffHelp };
  },
  declared: async () => {
    const m = await import('./declared.js');
    return { run: (args) => m.declaredCommand(args), help: m.declaredHelp };
  },
  policy: async () => {
    const m = await import('./policy.js');
    return { run: (args) => m.policyCommand(args), help: m.policyHelp };
  },
  journey: async () => {
    const m = await import('./journey.js');
    return { run: (args) => m.journeyCommand(args), help: m.journeyHelp };
  },
  preview: async () => {
    const m = await import('./preview.js');
    return { run: (args) => m.previewCommand(args), help: m.previewHelp };
  },
  alias: async () => {
    const m = await import('./alias.js');
    return { run: (args) => m.aliasCommand(args), help: m.aliasHelp };
  },
  incidents: async () => {
    const m = await import('./incidents.js');
    return { run: (args) => m.incidentsCommand(args), help: m.incidentsHelp };
  },
  alerts: async () => {
    const m = await import('./incidents.js');
    return { run: (args) => m.alertsCommand(args), help: m.alertsHelp };
  },
  keys: async () => {
    const m = await import('./keys.js');
    return { run: m.keysCommand, help: m.keysHelp };
  },
  audit: async () => {
    const m = await import('./keys.js');
    return { run: m.auditCommand, help: m.auditHelp };
  },
  backup: async () => {
    const m = await import('./backup.js');
    return { run: m.backupCommand, help: m.backupHelp };
  },
  restore: async () => {
    const m = await import('./restore.js');
    return { run: m.restoreCommand, help: m.restoreHelp };
  },
};

/** The commands that load the Kafka client, which needs a newer Node.js than the rest. */
const NEEDS_KAFKA_CLIENT = new Set(['serve', 'proxy']);

/** True when `args` asks for help: `--help` or `-h` before a `--` (after it, every word is an argument). */
function asksForHelp(args: readonly string[]): boolean {
  for (const arg of args) {
    if (arg === '--') return false;
    if (arg === '--help' || arg === '-h') return true;
  }
  return false;
}

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === undefined || command === '--help' || command === '-h') {
    process.stdout.write(`${usage}\n`);
    return command === undefined ? 1 : 0;
  }
  const wantsHelp = command === 'help' || asksForHelp(rest);
  const name = command === 'help' ? rest[0] : command;
  if (name === undefined) {
    process.stdout.write(`${usage}\n`);
    return 0;
  }
  const load = Object.hasOwn(commands, name) ? commands[name] : undefined;
  if (!load) {
    process.stderr.write(`headwater: unknown command ${JSON.stringify(name)}.\n\n${usage}\n`);
    return 2;
  }
  if (NEEDS_KAFKA_CLIENT.has(name)) {
    const problem = nodeVersionProblem(name);
    if (problem !== undefined) {
      process.stderr.write(`${problem}\n`);
      return 1;
    }
  }
  const loaded = await load();
  if (wantsHelp) {
    process.stdout.write(formatHelp(loaded.help));
    return 0;
  }
  try {
    return await loaded.run(rest);
  } catch (error) {
    // node:util parseArgs refusing a flag, in the commands that leave its error to us: a usage error (exit 2).
    const code = (error as { code?: unknown }).code;
    if (typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS')) {
      throw new CliError(
        `${name}: ${(error as Error).message.replace(/\.?$/, '.')} See \`headwater ${name} --help\`.`,
        2,
        {
          cause: error,
        },
      );
    }
    throw error;
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    const message =
      error instanceof HeadwaterError || error instanceof CliError || error instanceof TypeError
        ? error.message
        : String(error);
    process.stderr.write(`headwater: ${message}\n`);
    // A usage error or a refused input exits 2, as the commands that catch their own errors do.
    process.exitCode = error instanceof CliError ? error.exitCode : 1;
  },
);
