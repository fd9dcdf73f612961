import { mkdirSync, readdirSync, readFileSync, truncateSync } from 'node:fs';
import { open, rename, rm, writeFile, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { untilAborted } from './abortable.js';

/** Options of {@link openSpool}. */
export interface SpoolOptions {
  /** The spool's own folder (one per sink). Created if absent. */
  readonly dir: string;
  /** Most bytes of events waiting in it; appends beyond are refused. @default 104857600 (100 MiB) */
  readonly maxBytes?: number;
  /** A segment file is closed and a new one started past this size. @default 16777216 (16 MiB) */
  readonly segmentBytes?: number;
}

/** A durable FIFO of event texts: appended and fsynced before they are acknowledged, delivered, then acked. */
export interface Spool {
  /** Events waiting (appended, not acked). */
  readonly depth: number;
  /** Bytes of the events waiting. */
  readonly bytes: number;
  /** When the oldest waiting event was appended in this process (or loaded at start), ms since the epoch. */
  readonly oldestAt: number | undefined;
  /**
   * Appends `texts` (one JSON event each, no newline inside) and resolves once they are on disk (fsync).
   * Resolves false, appending nothing, when they would take the spool past its `maxBytes`.
   * Appends that arrive together share one fsync.
   */
  append(texts: readonly string[]): Promise<boolean>;
  /** Whether `texts` would fit now (an append made at once would not be refused). */
  fits(texts: readonly string[]): boolean;
  /** Up to `count` of the oldest waiting events, without removing them. */
  peek(count: number): readonly string[];
  /** Removes the `count` oldest waiting events (delivered), and persists the cursor. */
  ack(count: number): Promise<void>;
  /** Resolves when there is something to peek (at once if there is). */
  waitForData(signal: AbortSignal): Promise<void>;
  close(): Promise<void>;
}

interface Segment {
  /** Sequence number of its first event: its file is `<first>.ndjson`. */
  readonly first: number;
  count: number;
  bytes: number;
}

const pad = (seq: number) => String(seq).padStart(16, '0');
/** Bytes `texts` take in a segment: each and its newline. */
const sizeOf = (texts: readonly string[]) =>
  texts.reduce((sum, text) => sum + Buffer.byteLength(text) + 1, 0);

/**
 * Opens (or creates) a spool in `dir`: segments `<seq>.ndjson` of one event per line, and `cursor`, the sequence
 * number of the first event not yet acked. After a crash, SIGKILL included, everything appended is still there; a
 * line torn by the crash (never acknowledged: the fsync had not returned) is cut off; events acked but whose
 * cursor had not reached the disk are delivered again (at least once).
 */
export function openSpool(options: SpoolOptions): Spool {
  const dir = path.resolve(options.dir);
  const maxBytes = options.maxBytes ?? 100 * 1024 * 1024;
  const segmentBytes = options.segmentBytes ?? 16 * 1024 * 1024;
  mkdirSync(dir, { recursive: true });
  const cursorFile = path.join(dir, 'cursor');
  let cursor = 0;
  try {
    cursor = Number(readFileSync(cursorFile, 'utf8').trim()) || 0;
  } catch {
    // A new spool.
  }
  const segments: Segment[] = [];
  /** Waiting events, oldest first (they are also on disk); bounded by maxBytes. */
  let waiting: string[] = [];
  let head = 0;
  let bytes = 0;
  for (const name of readdirSync(dir)
    .filter((file) => /^\d+\.ndjson$/.test(file))
    .sort()) {
    const file = path.join(dir, name);
    let text = readFileSync(file, 'utf8');
    const end = text.lastIndexOf('\n') + 1;
    if (end < text.length) {
      truncateSync(file, Buffer.byteLength(text.slice(0, end)));
      text = text.slice(0, end);
    }
    const lines = text === '' ? [] : text.slice(0, -1).split('\n');
    const segment: Segment = {
      first: Number(name.slice(0, -'.ndjson'.length)),
      count: lines.length,
      bytes: 0,
    };
    lines.forEach((line, index) => {
      const size = Buffer.byteLength(line) + 1;
      segment.bytes += size;
      if (segment.first + index >= cursor) {
        waiting.push(line);
        bytes += size;
      }
    });
    segments.push(segment);
  }
  const last = segments.at(-1);
  let nextSeq = last ? last.first + last.count : cursor;
  if (cursor > nextSeq) cursor = nextSeq;
  // Waiting events start at the cursor; if segments were deleted past it, the oldest kept is the start.
  if (segments[0] && segments[0].first > cursor) cursor = segments[0].first;
  const loadedAt = Date.now();
  const appendedAt: number[] = waiting.map(() => loadedAt);

  let current: { segment: Segment; handle: FileHandle } | undefined;
  let queue: {
    texts: readonly string[];
    size: number;
    resolve: (ok: boolean) => void;
    reject: (e: Error) => void;
  }[] = [];
  let flushing: Promise<void> | undefined;
  let reserved = 0;
  let wake: (() => void) | undefined;
  let cursorWrite: Promise<void> = Promise.resolve();

  async function writable(): Promise<{ segment: Segment; handle: FileHandle }> {
    if (current && current.segment.bytes < segmentBytes) return current;
    if (current) await current.handle.close();
    const reuse = segments.at(-1);
    const segment =
      reuse && reuse.bytes < segmentBytes && current === undefined
        ? reuse
        : { first: nextSeq, count: 0, bytes: 0 };
    if (segment !== reuse) segments.push(segment);
    current = { segment, handle: await open(path.join(dir, `${pad(segment.first)}.ndjson`), 'a') };
    return current;
  }

  async function flush(): Promise<void> {
    while (queue.length > 0) {
      const group = queue;
      queue = [];
      try {
        const target = await writable();
        const text = group.flatMap(({ texts }) => texts.map((t) => `${t}\n`)).join('');
        await target.handle.write(text);
        await target.handle.datasync();
        const now = Date.now();
        for (const { texts, size } of group) {
          for (const line of texts) {
            waiting.push(line);
            appendedAt.push(now);
          }
          target.segment.count += texts.length;
          target.segment.bytes += size;
          nextSeq += texts.length;
          bytes += size;
          reserved -= size;
        }
        for (const { resolve } of group) resolve(true);
        wake?.();
      } catch (error) {
        for (const { size, reject } of group) {
          reserved -= size;
          reject(error as Error);
        }
        // The handle may be half-written: start a new segment after what is known to be there.
        await current?.handle.close().catch(() => undefined);
        current = undefined;
      }
    }
  }

  const spool: Spool = {
    get depth() {
      return waiting.length - head;
    },
    get bytes() {
      return bytes;
    },
    get oldestAt() {
      return head < appendedAt.length ? appendedAt[head] : undefined;
    },
    fits(texts) {
      return bytes + reserved + sizeOf(texts) <= maxBytes;
    },
    append(texts) {
      if (texts.length === 0) return Promise.resolve(true);
      const size = sizeOf(texts);
      if (bytes + reserved + size > maxBytes) return Promise.resolve(false);
      reserved += size;
      return new Promise<boolean>((resolve, reject) => {
        queue.push({ texts, size, resolve, reject });
        flushing ??= flush().finally(() => {
          flushing = undefined;
        });
      });
    },
    peek(count) {
      return waiting.slice(head, head + count);
    },
    async ack(count) {
      const taken = Math.min(count, waiting.length - head);
      for (let i = 0; i < taken; i++) bytes -= Buffer.byteLength(waiting[head + i]!) + 1;
      head += taken;
      cursor += taken;
      if (head > 4096 && head * 2 > waiting.length) {
        waiting = waiting.slice(head);
        appendedAt.splice(0, head);
        head = 0;
      }
      const at = cursor;
      // Cursor writes are ordered; losing the last one only means delivering those events again.
      cursorWrite = cursorWrite.then(async () => {
        await writeFile(`${cursorFile}.tmp`, String(at));
        await rename(`${cursorFile}.tmp`, cursorFile);
        while (segments.length > 1 && segments[0]!.first + segments[0]!.count <= at) {
          const done = segments.shift()!;
          await rm(path.join(dir, `${pad(done.first)}.ndjson`), { force: true });
        }
      });
      await cursorWrite;
    },
    async waitForData(signal) {
      if (spool.depth > 0 || signal.aborted) return;
      await untilAborted(signal, (done) => {
        wake = done;
      });
      wake = undefined;
    },
    async close() {
      while (flushing) await flushing;
      await cursorWrite.catch(() => undefined);
      await current?.handle.close();
      current = undefined;
    },
  };
  return spool;
}
