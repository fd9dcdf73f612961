import type { ServerProcess } from './server-process.js';

/** Failed requests of a measurement: how many, and the first one's story (the rest are usually the same). */
export interface ErrorCount {
  readonly count: number;
  readonly first: string | undefined;
}

/**
 * Counts failures and decides when a measurement should give up: when the server process is gone, or after so
 * many failures that going on would only measure error handling.
 */
export class ErrorTally {
  #count = 0;
  #first: string | undefined;
  readonly #server: ServerProcess;
  readonly #limit: number;

  constructor(server: ServerProcess, limit = 500) {
    this.#server = server;
    this.#limit = limit;
  }

  /** Records a non-success response. */
  response(status: number, body: string): void {
    this.#count++;
    this.#first ??= `HTTP ${status}: ${body.slice(0, 300)}`;
  }

  /** Records a request that failed without a response (connection reset, timeout). */
  failure(error: unknown): void {
    this.#count++;
    this.#first ??= error instanceof Error ? error.message : String(error);
  }

  /** True once the measurement should stop. */
  get hopeless(): boolean {
    return this.#server.exited !== undefined || this.#count >= this.#limit;
  }

  get result(): ErrorCount {
    return { count: this.#count, first: this.#first };
  }
}

/** Runs `count` concurrent workers (closed-loop clients) and waits for all of them. */
export async function runWorkers(count: number, worker: (index: number) => Promise<void>): Promise<void> {
  await Promise.all(Array.from({ length: count }, (_, index) => worker(index)));
}

/** A human-readable error for a measurement the server could not serve. */
export function serverGone(server: ServerProcess): string | undefined {
  const exited = server.exited;
  if (!exited) return undefined;
  return `the server exited mid-run (code ${exited.code ?? 'none'}, signal ${exited.signal ?? 'none'}): ${server.stderrTail()}`;
}
