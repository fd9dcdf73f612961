#!/usr/bin/env node
import { HeadwaterError } from '../errors.js';
import { demoCommand } from './demo.js';
import { ingestCommand } from './ingest.js';
import { serveCommand } from './serve.js';

const usage = `headwater: an OpenLineage lineage server

Usage:
  headwater serve [--port 5000] [--host 127.0.0.1] [--data-dir ./.headwater] [--database-url URL] [--strict]
  headwater demo [--url http://127.0.0.1:5000] [--end-date 2025-03-14]
  headwater ingest FILE... [--url http://127.0.0.1:5000] [--batch-size 500]
  headwater --help`;

const commands: Record<string, (args: string[]) => Promise<number>> = {
  serve: serveCommand,
  demo: demoCommand,
  ingest: ingestCommand,
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
      error instanceof HeadwaterError || error instanceof TypeError ? error.message : String(error);
    process.stderr.write(`headwater: ${message}\n`);
    process.exitCode = 1;
  },
);
