/**
 * The embedded store's own thread. PGlite is PostgreSQL compiled to WebAssembly and runs synchronously in the
 * thread that calls it; here it gets a thread of its own, so SQL runs on one core while HTTP parsing,
 * validation and model derivation run on the other. Protocol: see {@link WorkerRequest} in embedded-db.ts.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { PGlite, type Transaction } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import type { WorkerReply, WorkerRequest } from './embedded-protocol.js';

const INT8_OID = 20;
const port = parentPort!;
const { pgDir } = workerData as { pgDir: string };

const transactions = new Map<
  number,
  { tx: Transaction; end: (commit: boolean) => void; done: Promise<void> }
>();
let nextTransaction = 1;

function reply(message: WorkerReply): void {
  port.postMessage(message);
}

function errorReply(id: number, error: unknown): WorkerReply {
  const { message, code, detail, position } = error as Error & {
    code?: string;
    detail?: string;
    position?: string;
  };
  return { id, error: { message: String(message), code, detail, position } };
}

async function main(): Promise<void> {
  let db: PGlite;
  try {
    db = await PGlite.create(pgDir, {
      parsers: { [INT8_OID]: (value: string) => Number(value) },
      extensions: { pg_trgm },
    });
    // The store's pages are in memory or the OS cache: random reads cost about what sequential ones do, so the
    // planner should prefer index lookups (its default assumes spinning disks). Statistics: store/statistics.ts.
    await db.exec('SET random_page_cost = 1.1');
  } catch (error) {
    reply(errorReply(0, error));
    return;
  }
  reply({ id: 0, rows: [] });

  port.on('message', (request: WorkerRequest) => {
    void handle(db, request).then(reply, (error: unknown) => reply(errorReply(request.id, error)));
  });
}

async function handle(db: PGlite, request: WorkerRequest): Promise<WorkerReply> {
  switch (request.op) {
    case 'query': {
      const target = request.transaction === undefined ? db : transactions.get(request.transaction)?.tx;
      if (!target) throw new Error(`transaction ${request.transaction} is not open`);
      const result = await target.query(request.sql, request.params as unknown[]);
      return { id: request.id, rows: result.rows as Record<string, unknown>[] };
    }
    case 'begin': {
      // PGlite's transaction() holds its lock until the callback settles; keep it open until 'end' arrives,
      // so queries outside the transaction wait, as they would on a single PostgreSQL connection.
      const transaction = nextTransaction++;
      const opened = new Promise<void>((resolveOpened, rejectOpened) => {
        const done = db
          .transaction(
            (tx) =>
              new Promise<void>((resolve, reject) => {
                transactions.set(transaction, {
                  tx,
                  end: (commit) => (commit ? resolve() : reject(new Error('rollback'))),
                  done,
                });
                resolveOpened();
              }),
          )
          .catch((error: unknown) => {
            if ((error as Error).message !== 'rollback') throw error;
          });
        done.catch(rejectOpened);
      });
      await opened;
      return { id: request.id, rows: [], transaction };
    }
    case 'end': {
      const open = transactions.get(request.transaction);
      if (!open) throw new Error(`transaction ${request.transaction} is not open`);
      transactions.delete(request.transaction);
      open.end(request.commit);
      await open.done;
      return { id: request.id, rows: [] };
    }
    case 'close':
      await db.close();
      return { id: request.id, rows: [] };
  }
}

void main();
