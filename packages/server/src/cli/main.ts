#!/usr/bin/env node
import { HeadwaterError } from '../errors.js';
import { aliasCommand } from './alias.js';
import { declaredCommand } from './declared.js';
import { demoCommand } from './demo.js';
import { diffCommand } from './diff.js';
import { impactCommand } from './impact.js';
import { ingestCommand } from './ingest.js';
import { lineageCommand } from './lineage.js';
import { proxyCommand } from './proxy.js';
import { rootCauseCommand } from './root-cause.js';
import { schemaDiffCommand } from './schema-diff.js';
import { serveCommand } from './serve.js';
import { auditCommand, keysCommand } from './keys.js';
import { backupCommand } from './backup.js';
import { restoreCommand } from './restore.js';
import { CliError } from './http.js';

const usage = `headwater: an OpenLineage lineage server

Usage:
  headwater serve [--port 5000] [--host 127.0.0.1] [--data-dir ./.headwater] [--database-url URL]
                  [--strict [structure|formats]] [--spec-dir DIR]   (strict: the bundled OpenLineage schemas;
                  structure = required fields, types, enums; formats = also date-time, uuid, uri)
                  [--advertise-url URL]   (replicas on one PostgreSQL: where the others reach this one)
                  [--kafka-brokers HOST:PORT --kafka-topic TOPIC... --kafka-group G] [--forward-config FILE]
  headwater proxy --config FILE [--port 5100] [--host 127.0.0.1] [--strict [structure|formats]] [--spec-dir DIR]
  headwater demo [--url http://127.0.0.1:5000] [--end-date 2025-03-14]
  headwater ingest FILE... [--url http://127.0.0.1:5000] [--batch-size 500]
  headwater lineage NODE [--direction upstream|downstream|both] [--depth 20] [--json] [--url URL]
  headwater root-cause NODE [--at TIME] [--json] [--url URL]
  headwater impact NODE [--change latest|removed|typeChanged|none] [--fail-on breaking|any] [--json] [--url URL]
  headwater schema-diff DATASET [--from VERSION --to VERSION] [--json] [--url URL]
  headwater diff RUN_A RUN_B [--json] [--url URL]
  headwater declared JOB [--at TIME] [--fail-on any] [--json] [--url URL]
  headwater alias add ALIAS DATASET | remove ALIAS | list [--json] [--url URL]   (dataset:<namespace>:<name>)
  headwater keys create --name NAME --role reader|writer|admin --namespaces PATTERN [--expires 90d] | list | revoke ID
  headwater audit [--since TIME] [--actor key:ID] [--action PREFIX] [--json]
  headwater backup --out FILE --url URL | [--data-dir DIR | --database-url URL]
  headwater restore --in FILE (--data-dir NEW_DIR | --database-url URL) [--force]
  headwater --help`;

const commands: Record<string, (args: string[]) => Promise<number>> = {
  serve: serveCommand,
  proxy: proxyCommand,
  demo: demoCommand,
  ingest: ingestCommand,
  lineage: lineageCommand,
  'root-cause': rootCauseCommand,
  impact: impactCommand,
  'schema-diff': schemaDiffCommand,
  diff: diffCommand,
  declared: declaredCommand,
  alias: aliasCommand,
  keys: keysCommand,
  audit: auditCommand,
  backup: backupCommand,
  restore: restoreCommand,
};

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === undefined || command === '--help' || command === '-h' || command === 'help') {
    process.stdout.write(`${usage}\n`);
    return command === undefined ? 1 : 0;
  }
  const run = commands[command];
  if (!run) {
    process.stderr.write(`headwater: unknown command ${JSON.stringify(command)}.\n\n${usage}\n`);
    return 2;
  }
  return run(rest);
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
