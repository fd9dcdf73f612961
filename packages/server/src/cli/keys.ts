import { parseArgs } from 'node:util';
import { resolveConfig } from '../config/server-config.js';
import { HeadwaterError } from '../core/errors.js';
import { parsePatterns } from '../security/access.js';
import { auditJson, listAudit, recordAudit } from '../store/queries/audit.js';
import { apiKeyJson, createApiKey, listApiKeys, revokeApiKey } from '../security/keys.js';
import { openEmbeddedDb, openPostgresDb, type Db } from '../store/db.js';
import { migrate } from '../store/migrate.js';
import { defineHelp, formatHelp, storeFlags } from './help.js';
import { formatTable } from './table.js';

const storeOptions = { 'data-dir': { type: 'string' }, 'database-url': { type: 'string' } } as const;

const keysOptions = {
  ...storeOptions,
  name: { type: 'string' },
  role: { type: 'string' },
  namespaces: { type: 'string' },
  expires: { type: 'string' },
  json: { type: 'boolean' },
} as const;

const embeddedNote =
  'While a server runs on the embedded store, the store is its alone: use the HTTP API with an admin key instead.';

/** `headwater keys --help`. */
export const keysHelp = defineHelp(keysOptions, {
  name: 'keys',
  usage: [
    'keys create --name NAME --role reader|writer|admin --namespaces PATTERN[,PATTERN...] [--expires TIME|30d]',
    'keys list [--json]',
    'keys revoke ID_OR_NAME',
    '(each with the store flags of serve: --data-dir ./.headwater or --database-url URL)',
  ],
  description:
    'API keys, in the store. The key is printed once: keep it. Send it as "Authorization: Bearer <key>"\n' +
    '(OPENLINEAGE_API_KEY for the OpenLineage clients, HEADWATER_API_KEY for this CLI).\n' +
    `${embeddedNote} (POST /api/v1/keys, GET /api/v1/keys, DELETE /api/v1/keys/{id}).`,
  flags: {
    ...storeFlags,
    name: { value: 'NAME', text: 'create: what the key is for; needed' },
    role: { value: 'reader|writer|admin', text: 'create: what it may do; needed' },
    namespaces: {
      value: 'PATTERN,...',
      text: 'create: the namespaces it covers (* matches any run); needed',
    },
    expires: {
      value: 'TIME|90d',
      default: 'never',
      text: 'create: an ISO time or a duration from now (d, h, m)',
    },
    json: { text: 'create, list: print JSON' },
  },
  examples: ["keys create --name ci --role writer --namespaces 'analytics*,raw*' --expires 90d", 'keys list'],
});

const usage = formatHelp(keysHelp).trimEnd();

const auditOptions = {
  ...storeOptions,
  since: { type: 'string' },
  actor: { type: 'string' },
  action: { type: 'string' },
  limit: { type: 'string' },
  json: { type: 'boolean' },
} as const;

/** `headwater audit --help`. */
export const auditHelp = defineHelp(auditOptions, {
  name: 'audit',
  usage: [
    'audit [--since TIME] [--actor key:ID] [--action PREFIX] [--limit 100] [--json] [--data-dir DIR | --database-url URL]',
  ],
  description:
    'The audit log, newest first: every write other than ingest and every refused credential, with who, when,\n' +
    `what, the status and the address. ${embeddedNote} (GET /api/v1/audit).`,
  flags: {
    ...storeFlags,
    since: { value: 'TIME', text: 'entries at or after this time (ISO 8601)' },
    actor: { value: 'ACTOR', text: 'only this actor (key:<id>, oidc:<sub>, anonymous, cli)' },
    action: { value: 'PREFIX', text: 'only actions starting so (auth., keys.)' },
    limit: { value: 'N', default: '100', text: 'most entries shown' },
    json: { text: 'print JSON' },
  },
  examples: ['audit --action keys. --limit 20'],
});

/** Opens the store `serve` would use with the same options, runs `fn`, closes it. */
async function withStore<T>(values: Record<string, unknown>, fn: (db: Db) => Promise<T>): Promise<T> {
  const config = resolveConfig({
    'data-dir': values['data-dir'] as string | undefined,
    'database-url': values['database-url'] as string | undefined,
  });
  const db = config.databaseUrl
    ? await openPostgresDb(config.databaseUrl)
    : await openEmbeddedDb(config.dataDir, { engine: config.embeddedEngine });
  try {
    await migrate(db);
    return await fn(db);
  } finally {
    await db.close();
  }
}

/** `--expires`: an ISO time, or a duration from now such as 90d, 12h or 30m. */
export function parseExpiry(text: string, now = Date.now()): Date {
  const duration = /^(\d+)([dhm])$/.exec(text);
  if (duration) {
    const unit = { d: 86_400_000, h: 3_600_000, m: 60_000 }[duration[2] as 'd' | 'h' | 'm'];
    return new Date(now + Number(duration[1]) * unit);
  }
  const date = new Date(text);
  if (Number.isNaN(date.getTime()))
    throw new HeadwaterError(
      'BAD_REQUEST',
      `--expires must be an ISO time or a duration like 90d; got ${JSON.stringify(text)}.`,
    );
  return date;
}

/** `headwater keys ...`: create, list and revoke API keys in the store. */
export async function keysCommand(args: string[]): Promise<number> {
  const [action, ...rest] = args;
  const write = (text: string) => process.stdout.write(`${text}\n`);
  if (action === 'create') {
    const { values } = parseArgs({
      args: rest,
      options: keysOptions,
      strict: true,
    });
    if (!values.name || !values.role || !values.namespaces) {
      process.stderr.write(`headwater keys create needs --name, --role and --namespaces.\n\n${usage}\n`);
      return 2;
    }
    const { name, role } = values;
    const namespaces = parsePatterns(values.namespaces, '--namespaces');
    const expiresAt = values.expires === undefined ? undefined : parseExpiry(values.expires);
    const { record, token } = await withStore(values, async (db) => {
      const created = await createApiKey(db, { name, role, namespaces, expiresAt });
      await recordAudit(db, {
        at: new Date(),
        actor: 'cli',
        action: 'keys.create',
        target: created.record.id,
        status: 0,
        detail: `${role} over ${namespaces.join(',')}`,
      });
      return created;
    });
    if (values.json) write(JSON.stringify({ key: token, ...apiKeyJson(record) }, null, 2));
    else {
      write(token);
      process.stderr.write(
        `Key ${record.id} (${record.name}): ${record.role} over ${record.namespaces.join(', ')}` +
          `${record.expiresAt ? `, expires ${record.expiresAt.toISOString()}` : ''}. It is shown only this once.\n`,
      );
    }
    return 0;
  }
  if (action === 'list') {
    const { values } = parseArgs({
      args: rest,
      options: { ...storeOptions, json: { type: 'boolean' } },
      strict: true,
    });
    const keys = (await withStore(values, listApiKeys)).map((record) => apiKeyJson(record));
    if (values.json) write(JSON.stringify(keys, null, 2));
    else
      write(
        formatTable(
          ['ID', 'NAME', 'ROLE', 'NAMESPACES', 'STATE', 'CREATED', 'EXPIRES'],
          keys.map((key) => [
            key.id,
            key.name,
            key.role,
            key.namespaces.join(','),
            key.state,
            key.createdAt,
            key.expiresAt ?? '',
          ]),
        ),
      );
    return 0;
  }
  if (action === 'revoke') {
    const { values, positionals } = parseArgs({
      args: rest,
      options: storeOptions,
      allowPositionals: true,
      strict: true,
    });
    if (positionals.length !== 1) {
      process.stderr.write(`headwater keys revoke needs one key id or name.\n\n${usage}\n`);
      return 2;
    }
    const revoked = await withStore(values, async (db) => {
      const keys = await revokeApiKey(db, positionals[0]!);
      if (keys.length > 0)
        await recordAudit(db, {
          at: new Date(),
          actor: 'cli',
          action: 'keys.revoke',
          target: keys.map((k) => k.id).join(','),
          status: 0,
        });
      return keys;
    });
    if (revoked.length === 0) {
      process.stderr.write(
        `headwater: no active key has the id or name ${JSON.stringify(positionals[0])}.\n`,
      );
      return 1;
    }
    write(`revoked ${revoked.map((key) => `${key.id} (${key.name})`).join(', ')}`);
    return 0;
  }
  process.stderr.write(`${usage}\n`);
  return action === undefined || action === '--help' ? 0 : 2;
}

/** `headwater audit`: the audit log, newest first. */
export async function auditCommand(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: auditOptions,
    strict: true,
  });
  const limit = values.limit === undefined ? 100 : Number(values.limit);
  if (!Number.isInteger(limit) || limit < 0)
    throw new HeadwaterError('BAD_REQUEST', '--limit must be a whole number.');
  const { entries } = await withStore(values, (db) =>
    listAudit(db, {
      since: values.since === undefined ? undefined : new Date(values.since),
      actor: values.actor,
      action: values.action,
      limit,
      offset: 0,
    }),
  );
  const rows = entries.map(auditJson);
  if (values.json) process.stdout.write(`${JSON.stringify(rows, null, 2)}\n`);
  else
    process.stdout.write(
      `${formatTable(
        ['AT', 'ACTOR', 'ACTION', 'TARGET', 'STATUS', 'ADDRESS', 'DETAIL'],
        rows.map((row) => [
          row.at,
          row.actor,
          row.action,
          row.target,
          String(row.status),
          row.address ?? '',
          row.detail ?? '',
        ]),
      )}\n`,
    );
  return 0;
}
