import type { Db, Queryable } from './db.js';

/** Runs `run`, one operation of the store ('query': a statement, 'transaction': a whole one), and times it. */
export type StoreTimer = <R>(operation: 'query' | 'transaction', run: () => Promise<R>) => Promise<R>;

/**
 * `db` with every statement and transaction run through `timed` (see ops/metrics.ts). Everything else the
 * store offers passes through unchanged.
 */
export function timedDb<T extends Db>(db: T, timed: StoreTimer): T {
  // The timed statement and transaction, made once from the store's own. Assigning `query` or `transaction` on
  // the instrumented store (a test standing in for the store) replaces what it answers, and the replacement may
  // call the timed one it read before: the store's own is never looked up again, so that cannot loop.
  const base = { query: db.query.bind(db), transaction: db.transaction.bind(db) };
  const own = new Map<PropertyKey, unknown>([
    [
      'query',
      (sql: string, params?: readonly unknown[], name?: string) =>
        timed('query', () => base.query(sql, params, name)),
    ],
    [
      'transaction',
      <R>(fn: (tx: Queryable) => Promise<R>) => timed('transaction', () => base.transaction(fn)),
    ],
  ]);
  return new Proxy(db, {
    get(target, property, receiver) {
      if (own.has(property)) return own.get(property);
      const value: unknown = Reflect.get(target, property, receiver);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
    set(target, property, value, receiver) {
      if (!own.has(property)) return Reflect.set(target, property, value, receiver);
      own.set(property, value);
      return true;
    },
    // What spies (vi.spyOn) read and write: the same slots as get and set.
    getOwnPropertyDescriptor(target, property) {
      const descriptor = Reflect.getOwnPropertyDescriptor(target, property);
      return own.has(property) && descriptor ? { ...descriptor, value: own.get(property) } : descriptor;
    },
    defineProperty(target, property, descriptor) {
      if (!own.has(property) || !('value' in descriptor))
        return Reflect.defineProperty(target, property, descriptor);
      own.set(property, descriptor.value);
      return true;
    },
  });
}
