import { mkdirSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import {
  SUCCESS,
  toError,
  type EmitResult,
  type OpenLineageEvent,
  type Transport,
} from '@headwater/openlineage';

/** Options of {@link createArchiveSink}. */
export interface ArchiveSinkOptions {
  /** The folder of the archive files. Created if absent. */
  readonly dir: string;
  /** A file is closed and the next one started past this size. @default 67108864 (64 MiB) */
  readonly maxFileBytes?: number;
}

/**
 * A rotating NDJSON archive: events appended one per line to `openlineage-<UTC time>.ndjson` in `dir`, a new file
 * past `maxFileBytes`; a batch is reported delivered once it is on disk (fsync).
 */
export function createArchiveSink(options: ArchiveSinkOptions): Transport {
  const dir = path.resolve(options.dir);
  const maxFileBytes = options.maxFileBytes ?? 64 * 1024 * 1024;
  mkdirSync(dir, { recursive: true });
  let current: { handle: FileHandle; bytes: number } | undefined;
  let sequence = 0;
  let queue: Promise<unknown> = Promise.resolve();
  const write = async (events: readonly OpenLineageEvent[]) => {
    if (!current || current.bytes >= maxFileBytes) {
      await current?.handle.close();
      const stamp = new Date().toISOString().replace(/[:.]/g, '-');
      const name = `openlineage-${stamp}-${String(sequence++).padStart(4, '0')}.ndjson`;
      current = { handle: await open(path.join(dir, name), 'a'), bytes: 0 };
    }
    const text = events.map((event) => `${JSON.stringify(event)}\n`).join('');
    await current.handle.write(text);
    await current.handle.datasync();
    current.bytes += Buffer.byteLength(text);
  };
  const send = (events: readonly OpenLineageEvent[]): Promise<EmitResult> => {
    const result = queue
      .then(() => write(events))
      .then(
        () => SUCCESS,
        (error: unknown) => {
          current = undefined;
          return { status: 'retryable' as const, error: toError(error) };
        },
      );
    queue = result;
    return result;
  };
  return {
    emit: (event) => send([event]),
    emitBatch: (events) => send(events),
    async close() {
      await queue.catch(() => undefined);
      await current?.handle.close();
      current = undefined;
      return true;
    },
  };
}
