/**
 * The on-disk spools: NDJSON files of events that could not be delivered yet. Two layouts over one way of writing:
 *
 * - the client's spool file ({@link createSpoolWriter}, {@link replaySpool}): one file a person can read, sent
 *   again by renaming it aside and replaying it;
 * - a spool queue ({@link openSpoolQueue}): a folder of segments and a cursor, peeked and acked by a loop that
 *   delivers (the Headwater proxy's forwarder keeps one per sink).
 *
 * Both append through {@link createLineAppender}: lines in call order, appends that arrive together written at
 * once and made durable with one fsync before any of them resolves, bounded in bytes counting appends under way;
 * and both keep a line torn by a crash from swallowing the next event.
 */
import { mkdirSync, readdirSync, readFileSync, truncateSync } from 'node:fs';
import {
  appendFile,
  mkdir,
  open,
  readFile,
  rename,
  rm,
  stat,
  writeFile,
  type FileHandle,
} from 'node:fs/promises';
import path from 'node:path';
import { untilAborted } from './backoff.js';
import type { OpenLineageEvent } from './generated/model.js';
import type { Transport } from './transports/transport.js';
import { safeEmit } from './transports/transport.js';

/** Bytes `lines` take in a spool file: each and its newline. */
const sizeOf = (lines: readonly string[]) =>
  lines.reduce((sum, line) => sum + Buffer.byteLength(line) + 1, 0);

/** The file an appender writes a group to; `release` (if any) is called once the group is on disk or failed. */
interface AppendTarget {
  readonly handle: FileHandle;
  readonly release?: () => Promise<void>;
}

interface PendingAppend {
  readonly lines: readonly string[];
  readonly size: number;
  readonly resolve: () => void;
  readonly reject: (error: Error) => void;
}

/** What a spool layout tells {@link createLineAppender}. */
interface LineAppenderOptions {
  /** The file the next group goes to (a spool queue starts a new segment here when the last is full). */
  readonly target: () => Promise<AppendTarget>;
  /** Called with each group once it is on disk, before its appends resolve, in order. */
  readonly written?: (target: AppendTarget, group: readonly PendingAppend[]) => void;
  /** Called after a group failed: what was written of it is unknown, so the layout drops the handle. */
  readonly failed?: () => Promise<void>;
}

/** Appends lines to the files of a spool, in order and durably. */
interface LineAppender {
  /** Bytes of appends accepted and not yet on disk: a bound counts them, so appends in flight cannot overshoot it. */
  readonly reserved: number;
  /** Appends `lines` (no newline inside); resolves once they are on disk (fsync), rejects if the write failed. */
  append(lines: readonly string[], size?: number): Promise<void>;
  /** Resolves once every append accepted so far has settled. */
  drain(): Promise<void>;
}

/**
 * The one writer of both spools. Appends that arrive while a write is under way wait for it and then share the
 * next write and fsync (a group commit), so a burst costs one fsync, not one per append, and order is call order.
 */
function createLineAppender(options: LineAppenderOptions): LineAppender {
  let queue: PendingAppend[] = [];
  let flushing: Promise<void> | undefined;
  let reserved = 0;

  async function flush(): Promise<void> {
    while (queue.length > 0) {
      const group = queue;
      queue = [];
      let target: AppendTarget | undefined;
      try {
        target = await options.target();
        await target.handle.write(group.flatMap(({ lines }) => lines.map((line) => `${line}\n`)).join(''));
        await target.handle.datasync();
        await target.release?.();
        for (const { size } of group) reserved -= size;
        options.written?.(target, group);
        for (const { resolve } of group) resolve();
      } catch (error) {
        await target?.release?.().catch(() => undefined);
        for (const { size, reject } of group) {
          reserved -= size;
          reject(error as Error);
        }
        await options.failed?.().catch(() => undefined);
      }
    }
  }

  return {
    get reserved() {
      return reserved;
    },
    append(lines, size = sizeOf(lines)) {
      reserved += size;
      return new Promise<void>((resolve, reject) => {
        queue.push({ lines, size, resolve, reject });
        flushing ??= flush().finally(() => {
          flushing = undefined;
        });
      });
    },
    async drain() {
      while (flushing) await flushing;
    },
  };
}

/** An appender to one file, opened for each group: a file renamed aside meanwhile is not written to again. */
function fileAppender(file: string, written?: (group: readonly PendingAppend[]) => void): LineAppender {
  return createLineAppender({
    target: async () => {
      const handle = await open(file, 'a');
      return { handle, release: () => handle.close() };
    },
    ...(written === undefined
      ? {}
      : { written: (_: AppendTarget, group: readonly PendingAppend[]) => written(group) }),
  });
}

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

/** Appends undelivered events to an NDJSON file, in order, durably (fsync) and size-bounded. */
export interface SpoolWriter {
  /** Appends the events; resolves `false` when they were not written (file full or disk error). */
  write(events: readonly OpenLineageEvent[]): Promise<boolean>;
}

/**
 * Creates the writer the client uses for `spool`. Never throws; failures resolve `false`. The file is opened for
 * each write, so one renamed aside by {@link replaySpool} is left alone and the next write starts a new one.
 */
export function createSpoolWriter(options: SpoolOptions): SpoolWriter {
  const file = path.resolve(options.path);
  const maxBytes = options.maxBytes ?? 100 * 1024 * 1024;
  let size = 0;
  let prepared: Promise<void> | undefined;
  /** Mkdir, the size already there, and a newline after a line torn by a crash (it stays, and replays as invalid). */
  const prepare = async (): Promise<void> => {
    await mkdir(path.dirname(file), { recursive: true });
    const existing = await stat(file).then(
      (s) => s.size,
      () => 0,
    );
    size = existing;
    if (existing === 0) return;
    const handle = await open(file, 'r');
    try {
      const last = Buffer.alloc(1);
      await handle.read(last, 0, 1, existing - 1);
      if (last[0] !== 0x0a) {
        await appendFile(file, '\n');
        size++;
      }
    } finally {
      await handle.close();
    }
  };
  const appender = fileAppender(file, (group) => {
    for (const append of group) size += append.size;
  });
  return {
    async write(events) {
      try {
        prepared ??= prepare().catch((error: unknown) => {
          prepared = undefined;
          throw error;
        });
        await prepared;
        const lines = events.map((event) => JSON.stringify(event));
        const bytes = sizeOf(lines);
        if (size + appender.reserved + bytes > maxBytes) return false;
        await appender.append(lines, bytes);
        return true;
      } catch {
        return false;
      }
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
  // On disk again (fsync) before the copy aside goes.
  if (failed.length > 0) await fileAppender(file).append(failed);
  await rm(aside, { force: true });
  return { sent, requeued: failed.length, invalid };
}

/** Options of {@link openSpoolQueue}. */
export interface SpoolQueueOptions {
  /** The queue's own folder (one per consumer, for example per sink). Created if absent. */
  readonly dir: string;
  /** Most bytes of events waiting in it; appends beyond are refused. @default 104857600 (100 MiB) */
  readonly maxBytes?: number;
  /** A segment file is closed and a new one started past this size. @default 16777216 (16 MiB) */
  readonly segmentBytes?: number;
}

/** A durable FIFO of event texts: appended and fsynced before they are acknowledged, delivered, then acked. */
export interface SpoolQueue {
  /** Events waiting (appended, not acked). */
  readonly depth: number;
  /** Bytes of the events waiting. */
  readonly bytes: number;
  /** When the oldest waiting event was appended in this process (or loaded at start), ms since the epoch. */
  readonly oldestAt: number | undefined;
  /**
   * Appends `texts` (one JSON event each, no newline inside) and resolves once they are on disk (fsync).
   * Resolves false, appending nothing, when they would take the queue past its `maxBytes`.
   * Appends that arrive together share one fsync.
   */
  append(texts: readonly string[]): Promise<boolean>;
  /** Whether `texts` would fit now (an append made at once would not be refused). */
  fits(texts: readonly string[]): boolean;
  /** Up to `count` of the oldest waiting events, without removing them. */
  peek(count: number): readonly string[];
  /** Removes the `count` oldest waiting events (delivered), and persists the cursor. */
  ack(count: number): Promise<void>;
  /** Resolves when there is something to peek (at once if there is), or when `signal` aborts. */
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

/**
 * Opens (or creates) a spool queue in `dir`: segments `<seq>.ndjson` of one event per line, and `cursor`, the
 * sequence number of the first event not yet acked. After a crash, SIGKILL included, everything appended is still
 * there; a line torn by the crash (never acknowledged: the fsync had not returned) is cut off; events acked but
 * whose cursor had not reached the disk are delivered again (at least once).
 *
 * @example
 * ```ts
 * const queue = openSpoolQueue({ dir: '.openlineage/queue' });
 * await queue.append([JSON.stringify(event)]);
 * const batch = queue.peek(100); // send them, then:
 * await queue.ack(batch.length);
 * ```
 */
export function openSpoolQueue(options: SpoolQueueOptions): SpoolQueue {
  const dir = path.resolve(options.dir);
  const maxBytes = options.maxBytes ?? 100 * 1024 * 1024;
  const segmentBytes = options.segmentBytes ?? 16 * 1024 * 1024;
  mkdirSync(dir, { recursive: true });
  const cursorFile = path.join(dir, 'cursor');
  let cursor = 0;
  try {
    cursor = Number(readFileSync(cursorFile, 'utf8').trim()) || 0;
  } catch {
    // A new queue.
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
  let wake: (() => void) | undefined;
  let cursorWrite: Promise<void> = Promise.resolve();

  const appender = createLineAppender({
    async target() {
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
    },
    written(_, group) {
      const { segment } = current!;
      const now = Date.now();
      for (const { lines, size } of group) {
        for (const line of lines) {
          waiting.push(line);
          appendedAt.push(now);
        }
        segment.count += lines.length;
        segment.bytes += size;
        nextSeq += lines.length;
        bytes += size;
      }
      wake?.();
    },
    async failed() {
      // The handle may be half-written: start a new segment after what is known to be there.
      await current?.handle.close().catch(() => undefined);
      current = undefined;
    },
  });

  const queue: SpoolQueue = {
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
      return bytes + appender.reserved + sizeOf(texts) <= maxBytes;
    },
    async append(texts) {
      if (texts.length === 0) return true;
      const size = sizeOf(texts);
      if (bytes + appender.reserved + size > maxBytes) return false;
      await appender.append(texts, size);
      return true;
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
      if (queue.depth > 0 || signal.aborted) return;
      await untilAborted(signal, (done) => {
        wake = done;
      });
      wake = undefined;
    },
    async close() {
      await appender.drain();
      await cursorWrite.catch(() => undefined);
      await current?.handle.close();
      current = undefined;
    },
  };
  return queue;
}
