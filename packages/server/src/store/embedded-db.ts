import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { Db, Queryable } from './db.js';
import { DiskFullError, freeBytes, freeSpaceGuard, MIN_FREE_BYTES } from './disk-space.js';
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

/**
 * Longest wait for one answer of the embedded store. PGlite runs each statement to its end on its thread, so a
 * thread that has not answered by then is taken as wedged (a full disk can leave it so): it is stopped, the store
 * is reported lost, and the next probe starts a new thread on the same files.
 */
const EMBEDDED_ANSWER_TIMEOUT_MS = 120_000;
/** How long a request may wait on a full disk before it is answered as unavailable (see the watchdog below). */
const EMBEDDED_STALL_MS = 3_000;

/** One PGlite thread and the requests waiting on it. */
interface Thread {
  readonly worker: Worker;
  send(body: RequestBody): Promise<WorkerReply & { error?: undefined }>;
  /** Set once the thread is gone or wedged; every later request fails with it. */
  readonly failure: Error | undefined;
  /** When the oldest request still waiting was sent (ms since the epoch), if any is. */
  oldestPendingAt(): number | undefined;
  /** Fails the requests waiting now with `error` (the thread goes on; their late answers are dropped). */
  failPending(error: Error): void;
}

/** Starts PGlite on a thread of its own in `pgDir`; resolves once it is open. */
async function startThread(pgDir: string, onLost: (error: Error) => void): Promise<Thread> {
  const worker = new Worker(workerUrl(), { workerData: { pgDir } });
  const pending = new Map<number, Pending & { timer?: NodeJS.Timeout; sentAt?: number }>();
  let nextId = 1;
  let failure: Error | undefined;
  let opening = true;

  const opened = new Promise<void>((resolve, reject) => {
    pending.set(0, { resolve: () => resolve(), reject });
  });
  worker.on('message', (reply: WorkerReply) => {
    const waiter = pending.get(reply.id);
    if (!waiter) return;
    pending.delete(reply.id);
    clearTimeout(waiter.timer);
    if (reply.error)
      waiter.reject(new EmbeddedStoreError(reply.error.message, reply.error.code, reply.error.detail));
    else waiter.resolve(reply);
  });
  const fail = (error: Error) => {
    if (failure) return;
    failure = error;
    for (const waiter of pending.values()) {
      clearTimeout(waiter.timer);
      waiter.reject(error);
    }
    pending.clear();
    if (!opening) onLost(error);
  };
  worker.on('error', fail);
  worker.on('exit', (code) => fail(new Error(`the embedded store's thread exited (code ${code})`)));

  const thread: Thread = {
    worker,
    get failure() {
      return failure;
    },
    oldestPendingAt() {
      let oldest: number | undefined;
      for (const waiter of pending.values()) {
        if (waiter.sentAt !== undefined && (oldest === undefined || waiter.sentAt < oldest))
          oldest = waiter.sentAt;
      }
      return oldest;
    },
    failPending(error) {
      for (const waiter of pending.values()) {
        clearTimeout(waiter.timer);
        waiter.reject(error);
      }
      pending.clear();
    },
    send: (body) =>
      new Promise((resolve, reject) => {
        if (failure) {
          reject(failure);
          return;
        }
        const id = nextId++;
        const timer = setTimeout(() => {
          fail(
            new EmbeddedStoreError(
              `the embedded store did not answer within ${EMBEDDED_ANSWER_TIMEOUT_MS / 1000} s; restarting it`,
              '57014',
            ),
          );
          void worker.terminate();
        }, EMBEDDED_ANSWER_TIMEOUT_MS);
        timer.unref();
        pending.set(id, { resolve, reject, timer, sentAt: Date.now() });
        const request: WorkerRequest = { id, ...body };
        worker.postMessage(request);
      }),
  };
  try {
    await opened;
  } catch (error) {
    await worker.terminate();
    throw error;
  }
  opening = false;
  return thread;
}

/**
 * Starts PGlite on its own thread in `pgDir` and resolves once it is open. A thread that dies or wedges is
 * replaced by the next {@link Db.probe}, which also refuses while the disk has less than 32 MiB free.
 */
export async function startEmbeddedWorker(pgDir: string): Promise<Omit<Db, 'lead' | 'epoch' | 'listen'>> {
  const lostListeners: ((error: unknown) => void)[] = [];
  let closing = false;
  const onLost = (error: Error) => {
    if (!closing) for (const listener of lostListeners) listener(error);
  };
  let thread = await startThread(pgDir, onLost);
  const send = (body: RequestBody) => thread.send(body);

  // PGlite that meets a full disk (a write already under way when the disk fills) stops answering until space is
  // freed. Requests that wait that long while the disk is full are answered as such, so that ingest answers 503
  // at once instead of hanging; the thread finishes its work once space comes back.
  const watchdog = setInterval(() => {
    const oldest = thread.oldestPendingAt();
    if (oldest === undefined || Date.now() - oldest < EMBEDDED_STALL_MS) return;
    void freeBytes(pgDir).then(
      (free) => {
        if (free >= MIN_FREE_BYTES) return;
        thread.failPending(
          new DiskFullError(
            `no space left on device: the embedded store in ${pgDir} stopped answering with ` +
              `${Math.floor(free / 1024 / 1024)} MiB free. Free some space: ingest resumes by itself.`,
          ),
        );
      },
      () => undefined,
    );
  }, 1000);
  watchdog.unref();

  const checkWritable = freeSpaceGuard(pgDir);

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
    checkWritable,
    async probe() {
      await checkWritable();
      if (thread.failure) {
        await thread.worker.terminate();
        thread = await startThread(pgDir, onLost);
      }
      await query('SELECT 1');
    },
    onLost(listener) {
      lostListeners.push(listener);
    },
    async close() {
      closing = true;
      clearInterval(watchdog);
      await send({ op: 'close' }).catch(() => undefined);
      await thread.worker.terminate();
    },
  };
}
