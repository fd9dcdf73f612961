import { appendFile, mkdir, readFile, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import type { OpenLineageEvent } from './generated/model.js';
import type { Transport } from './transports/transport.js';
import { safeEmit } from './transports/transport.js';

/** Where undelivered events are kept. */
export interface SpoolOptions {
  /** The NDJSON file undelivered events are appended to. Parent folders are created. */
  readonly path: string;
  /**
   * Largest size of the spool file; events that would grow it beyond are dropped (and counted).
   * @default 104857600 (100 MiB)
   */
  readonly maxBytes?: number;
}

/** Appends undelivered events to an NDJSON file, serialised and size-bounded. */
export interface SpoolWriter {
  /** Appends the events; resolves `false` when they were not written (file full or disk error). */
  write(events: readonly OpenLineageEvent[]): Promise<boolean>;
}

/** Creates the writer the client uses for `spool`. Never throws; failures resolve `false`. */
export function createSpoolWriter(options: SpoolOptions): SpoolWriter {
  const file = path.resolve(options.path);
  const maxBytes = options.maxBytes ?? 100 * 1024 * 1024;
  let size: number | undefined;
  let queue: Promise<unknown> = Promise.resolve();
  return {
    write(events) {
      const result = queue.then(async () => {
        try {
          if (size === undefined) {
            await mkdir(path.dirname(file), { recursive: true });
            size = await stat(file).then(
              (s) => s.size,
              () => 0,
            );
          }
          const text = events.map((event) => `${JSON.stringify(event)}\n`).join('');
          const bytes = Buffer.byteLength(text);
          if (size + bytes > maxBytes) return false;
          await appendFile(file, text);
          size += bytes;
          return true;
        } catch {
          return false;
        }
      });
      queue = result;
      return result;
    },
  };
}

/** What {@link replaySpool} did. */
export interface ReplayReport {
  /** Events the transport accepted. */
  readonly sent: number;
  /** Events appended back to the spool because the transport still failed. */
  readonly requeued: number;
  /** Lines that were not JSON objects; dropped. */
  readonly invalid: number;
}

/**
 * Sends the events of a spool file again, in order, through `transport` (wrap it with `withRetry` if you
 * like). Events that fail again are appended back to the spool. The file is first renamed aside, so a
 * client still spooling into it meanwhile loses nothing.
 *
 * @example
 * ```ts
 * const report = await replaySpool('.openlineage/spool.ndjson', createHttpTransport({ url }));
 * console.log(`${report.sent} sent, ${report.requeued} still pending`);
 * ```
 */
export async function replaySpool(spoolPath: string, transport: Transport): Promise<ReplayReport> {
  const file = path.resolve(spoolPath);
  const aside = `${file}.${process.pid}.${Date.now()}.replaying`;
  try {
    await rename(file, aside);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { sent: 0, requeued: 0, invalid: 0 };
    throw new Error(`Cannot replay the spool ${file}: ${(error as Error).message}`, { cause: error });
  }
  const lines = (await readFile(aside, 'utf8')).split('\n').filter((line) => line.trim() !== '');
  let sent = 0;
  let invalid = 0;
  const failed: string[] = [];
  for (const line of lines) {
    let event: unknown;
    try {
      event = JSON.parse(line);
    } catch {
      invalid++;
      continue;
    }
    if (typeof event !== 'object' || event === null || Array.isArray(event)) {
      invalid++;
      continue;
    }
    const result = await safeEmit(transport, event as OpenLineageEvent);
    if (result.status === 'success') sent++;
    // A 4xx will not get better by waiting, but the spool is the user's to inspect: keep it.
    else failed.push(line);
  }
  if (failed.length > 0) await appendFile(file, failed.map((line) => `${line}\n`).join(''));
  await rm(aside, { force: true });
  return { sent, requeued: failed.length, invalid };
}
