import { parseArgs } from 'node:util';
import { resolveConfig } from '../config.js';
import { HeadwaterError } from '../errors.js';
import { parsePatterns } from '../security/access.js';
import { auditJson, listAudit, recordAudit } from '../security/audit.js';
import { apiKeyJson, createApiKey, listApiKeys, revokeApiKey } from '../security/keys.js';
import { openEmbeddedDb, openPostgresDb, type Db } from '../store/db.js';
import { migrate } from '../store/migrate.js';
import { formatTable } from './table.js';

const usage = `Usage:
  headwater keys create --name NAME --role reader|writer|admin --namespaces PATTERN[,PATTERN...] [--expires TIME|30d]
  headwater keys list [--json]
  headwater keys revoke ID_OR_NAME
  headwater audit [--since TIME] [--actor key:ID] [--action PREFIX] [--limit 100] [--json]
(all with the store options of serve: --data-dir ./.headwater or --database-url URL)

The key is printed once: keep it. Send it as "Authorization: Bearer <key>" (OPENLINEAGE_API_KEY for the
OpenLineage clients, HEADWATER_API_KEY for this CLI). While a server runs on the embedded store, the store is
its alone: use POST /api/v1/keys (and GET /api/v1/audit) with an admin key instead.`;

const storeOptions = { 'data-dir': { type: 'string' }, 'database-url': { type: 'string' } } as const;

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
      options: {
        ...storeOptions,
        name: { type: 'string' },
        role: { type: 'string' },
        namespaces: { type: 'string' },
        expires: { type: 'string' },
        json: { type: 'boolean' },
      },
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
    options: {
      ...storeOptions,
      since: { type: 'string' },
      actor: { type: 'string' },
      action: { type: 'string' },
      limit: { type: 'string' },
      json: { type: 'boolean' },
    },
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
