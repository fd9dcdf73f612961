import { appendFile, mkdir, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { OpenLineageEvent } from '../generated/model.js';
import type { EmitResult, Transport } from './transport.js';
import { SUCCESS, toError } from './transport.js';

/**
 * How the file transport writes:
 * - `append`: one JSON event per line (NDJSON) appended to `path`;
 * - `overwrite`: `path` holds a JSON array of the events of this program run, rewritten (atomically) on every
 *   event: a "last run" file such as `.viz/lineage_events.json`;
 * - `per-event`: one file per event, `<path>-<yyyyMMdd-HHmmss.SSSSSS>.json`, like the Python client with
 *   `append: false`.
 */
export type FileTransportMode = 'append' | 'overwrite' | 'per-event';

/** Options of {@link createFileTransport}. */
export interface FileTransportOptions {
  /** The file (or, in `per-event` mode, the file name prefix). Parent folders are created. */
  readonly path: string;
  /**
   * How to write; see {@link FileTransportMode}.
   * @default 'append'
   */
  readonly mode?: FileTransportMode;
  /**
   * In `overwrite` mode, the most events kept in the file; older ones are dropped first. Bounds memory.
   * @default 10000
   */
  readonly maxEvents?: number;
  /**
   * Clock for `per-event` file names.
   * @default () => new Date()
   */
  readonly now?: () => Date;
}

function timestampSuffix(date: Date): string {
  const pad = (n: number, width = 2): string => String(n).padStart(width, '0');
  return (
    `${date.getFullYear()}${pad(date.getMonth() + 1)}${pad(date.getDate())}-` +
    `${pad(date.getHours())}${pad(date.getMinutes())}${pad(date.getSeconds())}.${pad(date.getMilliseconds(), 3)}000`
  );
}

/**
 * Creates a transport that writes events to a local file. Writes are serialised, so lines never interleave
 * and `overwrite` never writes an older snapshot over a newer one.
 *
 * @example
 * ```ts
 * const transport = createFileTransport({ path: '.viz/lineage_events.json', mode: 'overwrite' });
 * ```
 */
export function createFileTransport(options: FileTransportOptions): Transport {
  const mode = options.mode ?? 'append';
  const maxEvents = options.maxEvents ?? 10_000;
  const now = options.now ?? (() => new Date());
  const file = path.resolve(options.path);
  const kept: OpenLineageEvent[] = [];
  let lastPerEventName = '';
  let sameNameCount = 0;
  let madeDir = false;
  let queue: Promise<unknown> = Promise.resolve();

  const write = async (event: OpenLineageEvent): Promise<void> => {
    if (!madeDir) {
      await mkdir(path.dirname(file), { recursive: true });
      madeDir = true;
    }
    switch (mode) {
      case 'append':
        await appendFile(file, `${JSON.stringify(event)}\n`);
        return;
      case 'overwrite': {
        kept.push(JSON.parse(JSON.stringify(event)) as OpenLineageEvent);
        if (kept.length > maxEvents) kept.splice(0, kept.length - maxEvents);
        // Write-then-rename so a reader never sees a half-written file.
        const temporary = `${file}.${process.pid}.tmp`;
        await writeFile(temporary, `${JSON.stringify(kept, null, 2)}\n`);
        await rename(temporary, file);
        return;
      }
      case 'per-event': {
        let name = `${file}-${timestampSuffix(now())}`;
        // Two events in one millisecond must not overwrite each other.
        if (name === lastPerEventName) name = `${name}-${++sameNameCount}`;
        else {
          lastPerEventName = name;
          sameNameCount = 0;
        }
        await writeFile(`${name}.json`, JSON.stringify(event), { flag: 'wx' });
        return;
      }
    }
  };

  return {
    emit(event) {
      const result = queue.then(async (): Promise<EmitResult> => {
        try {
          await write(event);
          return SUCCESS;
        } catch (thrown) {
          const error = new Error(
            `Could not write the OpenLineage event to ${file}: ${toError(thrown).message}`,
            {
              cause: thrown,
            },
          );
          return { status: 'retryable', error };
        }
      });
      queue = result;
      return result;
    },
    async flush() {
      await queue;
      return true;
    },
    async close() {
      await queue;
      return true;
    },
  };
}
