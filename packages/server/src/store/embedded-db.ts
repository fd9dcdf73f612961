import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { Db, Queryable } from './db.js';
import type { WorkerReply, WorkerRequest } from './embedded-protocol.js';

type Pending = {
  resolve: (reply: WorkerReply & { error?: undefined }) => void;
  reject: (error: Error) => void;
};
type RequestBody =
  | { op: 'query'; sql: string; params: readonly unknown[]; transaction?: number }
  | { op: 'begin' }
  | { op: 'end'; transaction: number; commit: boolean }
  | { op: 'close' };

/** An error from the embedded store, with PostgreSQL's SQLSTATE code like the pg driver's errors. */
export class EmbeddedStoreError extends Error {
  readonly code: string | undefined;
  readonly detail: string | undefined;

  constructor(message: string, code?: string, detail?: string) {
    super(message);
    this.name = 'EmbeddedStoreError';
    this.code = code;
    this.detail = detail;
  }
}

/**
 * The worker script: beside this module when built; when this module runs from TypeScript sources (tests),
 * the built copy, which `npm test` compiles before the suite runs.
 */
function workerUrl(): URL {
  const beside = new URL('./embedded-worker.js', import.meta.url);
  if (existsSync(fileURLToPath(beside))) return beside;
  const built = new URL('../../dist/store/embedded-worker.js', import.meta.url);
  if (existsSync(fileURLToPath(built))) return built;
  throw new Error(`The embedded store's worker is not built (${fileURLToPath(built)}): run \`npx tsc -b\`.`);
}

/** Starts PGlite on its own thread in `pgDir` and resolves once it is open. */
export async function startEmbeddedWorker(pgDir: string): Promise<Db> {
  const worker = new Worker(workerUrl(), { workerData: { pgDir } });
  const pending = new Map<number, Pending>();
  let nextId = 1;
  let failure: Error | undefined;

  const opened = new Promise<void>((resolve, reject) => {
    pending.set(0, { resolve: () => resolve(), reject });
  });
  worker.on('message', (reply: WorkerReply) => {
    const waiter = pending.get(reply.id);
    if (!waiter) return;
    pending.delete(reply.id);
    if (reply.error)
      waiter.reject(new EmbeddedStoreError(reply.error.message, reply.error.code, reply.error.detail));
    else waiter.resolve(reply);
  });
  const failAll = (error: Error) => {
    failure = error;
    for (const waiter of pending.values()) waiter.reject(error);
    pending.clear();
  };
  worker.on('error', failAll);
  worker.on('exit', (code) => failAll(new Error(`the embedded store's thread exited (code ${code})`)));

  const send = (body: RequestBody) =>
    new Promise<WorkerReply & { error?: undefined }>((resolve, reject) => {
      if (failure) {
        reject(failure);
        return;
      }
      const id = nextId++;
      pending.set(id, { resolve, reject });
      const request: WorkerRequest = { id, ...body };
      worker.postMessage(request);
    });

  try {
    await opened;
  } catch (error) {
    await worker.terminate();
    throw error;
  }

  const query = async <Row>(sql: string, params: readonly unknown[] = [], transaction?: number) =>
    (
      await send(
        transaction === undefined ? { op: 'query', sql, params } : { op: 'query', sql, params, transaction },
      )
    ).rows as Row[];

  return {
    kind: 'embedded',
    query: (sql, params) => query(sql, params),
    async transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
      const { transaction } = await send({ op: 'begin' });
      const id = transaction!;
      let result: T;
      try {
        result = await fn({ query: (sql, params) => query(sql, params, id) });
      } catch (error) {
        await send({ op: 'end', transaction: id, commit: false }).catch(() => undefined);
        throw error;
      }
      await send({ op: 'end', transaction: id, commit: true });
      return result;
    },
    async close() {
      await send({ op: 'close' }).catch(() => undefined);
      await worker.terminate();
    },
  };
}
