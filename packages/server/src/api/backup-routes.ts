import { PassThrough } from 'node:stream';
import { once } from 'node:events';
import type { FastifyInstance } from 'fastify';
import fastifyPlugin from 'fastify-plugin';
import { recordAudit } from '../store/queries/audit.js';
import { writeBackup } from '../store/backup.js';
import type { AppDeps } from './deps.js';

/** What the backup route needs: the store it reads (and audits to). */
export type BackupRouteDeps = Pick<AppDeps, 'db'>;

/**
 * GET /api/v1/backup: a backup of the whole store (store/backup.ts), streamed as it is read, taken in one
 * snapshot while the server goes on serving. The way to back up the embedded store, which is the server's
 * alone while it runs (`headwater backup --url` calls this). For admins over every namespace; audited.
 */
export const backupRoutes = fastifyPlugin<BackupRouteDeps>(registerBackupRoutes, { name: 'backup-routes' });

function registerBackupRoutes(
  app: FastifyInstance,
  deps: BackupRouteDeps,
  done: (error?: Error) => void,
): void {
  app.get(
    '/api/v1/backup',
    {
      config: { access: 'admin', global: true },
      schema: {
        tags: ['Operations'],
        summary: 'A backup of the whole store, as NDJSON, taken in one snapshot while serving',
        description:
          'Restore it with `headwater restore --in FILE --data-dir NEW_DIR`. PostgreSQL users may prefer pg_dump.',
      },
    },
    async (request, reply) => {
      const body = new PassThrough();
      const write = async (text: string) => {
        if (!body.write(text)) await once(body, 'drain');
      };
      const audit = (status: number, detail?: string) =>
        recordAudit(deps.db, {
          at: new Date(),
          actor: request.principal.subject,
          action: 'backup',
          target: request.url,
          status,
          address: request.ip,
          ...(detail === undefined ? {} : { detail }),
        }).catch((error: unknown) => request.log.warn({ err: error }, 'could not write the audit log'));
      // The snapshot is read while the answer streams; a failure part-way ends the stream early, and the
      // backup's missing last line makes restore refuse it.
      void writeBackup(deps.db, write).then(
        async (rows) => {
          body.end();
          await audit(200, `${rows} rows`);
        },
        async (error: unknown) => {
          request.log.error({ err: error }, 'backup failed');
          body.destroy(error as Error);
          await audit(500, (error as Error).message);
        },
      );
      return reply
        .type('application/x-ndjson')
        .header('content-disposition', 'attachment; filename="headwater-backup.ndjson"')
        .send(body);
    },
  );
  done();
}
