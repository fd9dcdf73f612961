import { createReadStream } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import {
  CliError,
  DEFAULT_SERVER_URL,
  formatCount,
  processIo,
  resolveServerUrl,
  sendEvents,
  type CommandIo,
  type OutputStream,
} from './http.js';
import { clientFlags, defineHelp, formatHelp } from './help.js';

const options = {
  url: { type: 'string' },
  'batch-size': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** `headwater ingest --help`. */
export const ingestHelp = defineHelp(options, {
  name: 'ingest',
  usage: [`ingest FILE... [--url ${DEFAULT_SERVER_URL}] [--batch-size 500]`],
  description:
    'Sends OpenLineage events from files to a running Headwater server through POST /api/v1/lineage/batch.\n' +
    'A file holds NDJSON (one event per line; read as a stream, any size), a JSON array of events, or one event.\n' +
    'Exits 1 if any event was refused, 2 for usage errors.',
  flags: {
    url: clientFlags.url,
    'batch-size': { value: 'N', default: '500', text: 'events per request (at most 4 MiB of them)' },
  },
  examples: ['ingest events.ndjson', 'ingest .viz/lineage_events.json --url http://127.0.0.1:5000'],
});

const usage = formatHelp(ingestHelp).trimEnd();

/** Events per request unless --batch-size says otherwise. */
const DEFAULT_BATCH_SIZE = 500;
/**
 * Bytes of events per request at most, whatever the batch size: well under the server's default body limit
 * (10 MiB), so large events do not turn every request into a 413 and a split.
 */
const MAX_BATCH_BYTES = 4 * 1024 * 1024;
/** JSON arrays and pretty-printed events are parsed whole; beyond this, ask for NDJSON instead. */
const MAX_WHOLE_FILE_BYTES = 256 * 1024 * 1024;
/** Failures listed in the summary; the rest are only counted. */
const LISTED_FAILURES = 10;

/** One event read from a file, as JSON text on one line, and where it came from (`file:line` or `file[index]`). */
interface ReadEvent {
  readonly kind: 'event';
  readonly text: string;
  readonly origin: string;
}

/** A read event and its position among everything read. */
interface Numbered extends ReadEvent {
  readonly seq: number;
}

/** Something read that cannot be sent: a line that is not JSON, or a whole file that is not. */
interface ReadFailure {
  readonly kind: 'failure';
  readonly origin: string;
  readonly reason: string;
  /** True when the failure stands for one event (a bad line), false for a whole unreadable file. */
  readonly isEvent: boolean;
}

const isJsonObject = (text: string): boolean => {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value);
  } catch {
    return false;
  }
};

function lineItem(file: string, text: string, line: number): ReadEvent | ReadFailure {
  const origin = `${file}:${line}`;
  try {
    JSON.parse(text);
  } catch (error) {
    return { kind: 'failure', origin, reason: `not valid JSON (${(error as Error).message})`, isEvent: true };
  }
  // Sent as read: a JSON text without raw line breaks is already one NDJSON line.
  return { kind: 'event', text, origin };
}

/**
 * Reads the events of one file, deciding the format by content: NDJSON when the first non-empty line (or, if
 * that one is broken, the second) is a JSON object on its own; otherwise one JSON document, an array of events
 * or a single event. NDJSON is streamed line by line, so file size does not matter; `progress` learns how many
 * bytes have been read.
 */
async function* readEventFile(
  file: string,
  size: number,
  progress: (bytes: number) => void,
): AsyncGenerator<ReadEvent | ReadFailure> {
  const stream = createReadStream(file);
  const lines = createInterface({ input: stream, crlfDelay: Infinity });
  const iterator = lines[Symbol.asyncIterator]();
  let lineNumber = 0;
  const nextLine = async (): Promise<{ text: string; line: number } | undefined> => {
    for (;;) {
      const next = await iterator.next();
      if (next.done) return undefined;
      lineNumber++;
      const text = (lineNumber === 1 ? next.value.replace(/^\uFEFF/, '') : next.value).trim();
      if (text !== '') return { text, line: lineNumber };
    }
  };
  try {
    const first = await nextLine();
    if (first === undefined) return;
    const firstIsObject = isJsonObject(first.text);
    // A broken first line followed by an object line is NDJSON with a bad line, not a pretty-printed event.
    const second = first.text.startsWith('{') && !firstIsObject ? await nextLine() : undefined;
    if (firstIsObject || (second !== undefined && isJsonObject(second.text))) {
      for (const head of second === undefined ? [first] : [first, second])
        yield lineItem(file, head.text, head.line);
      for (let next = await nextLine(); next !== undefined; next = await nextLine()) {
        progress(stream.bytesRead);
        yield lineItem(file, next.text, next.line);
      }
      progress(size);
      return;
    }
  } finally {
    lines.close();
    stream.destroy();
  }
  yield* readWholeFile(file, size);
  progress(size);
}

/** A file holding one JSON document: an array of events, or one event (possibly pretty-printed). */
async function* readWholeFile(file: string, size: number): AsyncGenerator<ReadEvent | ReadFailure> {
  const expected = 'expected NDJSON (one event per line), a JSON array of events, or one event object';
  if (size > MAX_WHOLE_FILE_BYTES) {
    yield {
      kind: 'failure',
      origin: file,
      reason: `is not NDJSON and too large (${formatCount(size)} bytes) to parse as one JSON document; convert it to NDJSON, one event per line`,
      isEvent: false,
    };
    return;
  }
  let value: unknown;
  try {
    value = JSON.parse((await readFile(file, 'utf8')).replace(/^\uFEFF/, ''));
  } catch (error) {
    yield {
      kind: 'failure',
      origin: file,
      reason: `is not valid JSON (${(error as Error).message}); ${expected}`,
      isEvent: false,
    };
    return;
  }
  if (Array.isArray(value)) {
    for (let index = 0; index < value.length; index++) {
      yield { kind: 'event', text: JSON.stringify(value[index]) ?? 'null', origin: `${file}[${index}]` };
    }
  } else if (typeof value === 'object' && value !== null) {
    yield { kind: 'event', text: JSON.stringify(value), origin: file };
  } else {
    yield {
      kind: 'failure',
      origin: file,
      reason: `holds a JSON ${typeof value}; ${expected}`,
      isEvent: false,
    };
  }
}

/** A one-line progress bar on a terminal; does nothing when nobody watches (stderr redirected). */
function createProgressBar(out: OutputStream, totalBytes: number) {
  let lastDraw = 0;
  let drawn = false;
  return {
    update(bytes: number, counts: { read: number; stored: number; failed: number }, force = false): void {
      const now = Date.now();
      if (!out.isTTY || (!force && now - lastDraw < 100)) return;
      lastDraw = now;
      drawn = true;
      const fraction = totalBytes > 0 ? Math.min(1, bytes / totalBytes) : 0;
      const width = 24;
      const filled = Math.round(fraction * width);
      const text =
        `[${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${Math.floor(fraction * 100)
          .toString()
          .padStart(3)}%  ` +
        `${formatCount(counts.read)} read, ${formatCount(counts.stored)} stored, ${formatCount(counts.failed)} failed`;
      // \r returns to the line start; the escape clears what a longer earlier line left behind.
      const columns = out.columns !== undefined && out.columns > 0 ? out.columns : 80;
      out.write(`\r\x1b[2K${text.slice(0, columns - 1)}`);
    },
    clear(): void {
      if (drawn) out.write('\r\x1b[2K');
    },
  };
}

/**
 * `headwater ingest FILE... [--url URL] [--batch-size N]`: sends the events of each file to the batch endpoint,
 * N at a time, reading the next batch while the previous one is in flight. Prints a summary: events read,
 * stored (identical events already stored count as stored) and failed, with the first reasons by file and
 * line or index. Returns 0 when every event was stored, 1 when any failed or the server could not be used, 2
 * for usage errors such as a missing file.
 *
 * @example
 * await ingestCommand(['events.ndjson', '--url', 'http://127.0.0.1:5000']); // 0
 */
export async function ingestCommand(args: string[], io: CommandIo = processIo): Promise<number> {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(args);
  } catch (error) {
    io.stderr.write(`headwater ingest: ${(error as Error).message}\n\n${usage}\n`);
    return 2;
  }
  if (parsed.values.help) {
    io.stdout.write(`${usage}\n`);
    return 0;
  }
  let url: string;
  let batchSize: number;
  let files: { file: string; size: number }[];
  try {
    url = resolveServerUrl(parsed.values.url, io.env);
    batchSize = batchSizeOf(parsed.values['batch-size']);
    files = await checkFiles(parsed.positionals);
  } catch (error) {
    if (!(error instanceof CliError)) throw error;
    io.stderr.write(`headwater ingest: ${error.message}\n`);
    return error.exitCode;
  }

  const counts = { read: 0, stored: 0, failed: 0 };
  // Failures are found out of order (a bad line at once, a refused event when its batch returns): `seq`, the
  // position in the input, keeps the listed ones the first in the files.
  const failures: { seq: number; origin: string; reason: string }[] = [];
  let unreadableFiles = 0;
  let seq = 0;
  const fail = (at: number, origin: string, reason: string) => {
    failures.push({ seq: at, origin, reason });
    if (failures.length > LISTED_FAILURES) failures.sort((a, b) => a.seq - b.seq).pop();
  };
  const bar = createProgressBar(
    io.stderr,
    files.reduce((sum, { size }) => sum + size, 0),
  );
  let bytesBefore = 0;
  let bytesNow = 0;

  // The first error that stops the load; set by a request's callback, checked by the reading loop.
  let fatal: Error | undefined;
  let inFlight: Promise<void> = Promise.resolve();
  let batch: Numbered[] = [];
  let batchBytes = 0;
  const send = (chunk: readonly Numbered[]) =>
    sendEvents(
      url,
      chunk.map((event) => event.text),
    ).then(
      ({ successful, failures: refused }) => {
        counts.stored += successful;
        counts.failed += refused.length;
        for (const { index, reason } of refused) {
          const event = chunk[index];
          fail(event?.seq ?? seq, event?.origin ?? `batch event ${index}`, reason);
        }
        bar.update(bytesNow, counts);
      },
      (error: unknown) => {
        fatal ??= error instanceof Error ? error : new Error(String(error));
      },
    );
  const flush = async () => {
    const chunk = batch;
    batch = [];
    batchBytes = 0;
    // One request at a time keeps the server's view in file order; the next batch is read meanwhile.
    await inFlight;
    if (chunk.length > 0 && fatal === undefined) inFlight = send(chunk);
  };

  reading: for (const { file, size } of files) {
    for await (const item of readEventFile(file, size, (bytes) => {
      bytesNow = bytesBefore + bytes;
    })) {
      if (item.kind === 'failure') {
        if (item.isEvent) {
          counts.read++;
          counts.failed++;
        } else unreadableFiles++;
        fail(seq++, item.origin, item.reason);
        continue;
      }
      counts.read++;
      if (batch.length > 0 && batchBytes + item.text.length > MAX_BATCH_BYTES) await flush();
      batch.push({ ...item, seq: seq++ });
      batchBytes += item.text.length + 1;
      if (batch.length >= batchSize) await flush();
      if (fatal !== undefined) break reading;
      bar.update(bytesNow, counts);
    }
    bytesBefore += size;
    bytesNow = bytesBefore;
  }
  await flush();
  await inFlight;
  bar.update(bytesNow, counts, true);
  bar.clear();

  const fileCount = `${files.length} file${files.length === 1 ? '' : 's'}`;
  const notSent = counts.read - counts.stored - counts.failed;
  const lines = [
    `headwater ingest: ${formatCount(counts.read)} events read from ${fileCount}: ` +
      `${formatCount(counts.stored)} stored, ${formatCount(counts.failed)} failed` +
      `${notSent > 0 ? `, ${formatCount(notSent)} not sent` : ''}.`,
  ];
  if (unreadableFiles > 0) lines.push(`${unreadableFiles} of the ${fileCount} could not be read.`);
  const problems = counts.failed + unreadableFiles;
  if (failures.length > 0) {
    failures.sort((a, b) => a.seq - b.seq);
    lines.push(problems > failures.length ? `First ${failures.length} failures:` : 'Failures:');
    for (const { origin, reason } of failures) lines.push(`  ${origin}: ${reason}`);
  }
  io.stdout.write(`${lines.join('\n')}\n`);
  if (fatal !== undefined) {
    if (!(fatal instanceof CliError)) throw fatal;
    io.stderr.write(`headwater ingest: stopped early: ${fatal.message}\n`);
    return 1;
  }
  return problems > 0 ? 1 : 0;
}

function parse(args: string[]) {
  return parseArgs({
    args,
    options,
    allowPositionals: true,
    strict: true,
  });
}

function batchSizeOf(value: string | undefined): number {
  if (value === undefined) return DEFAULT_BATCH_SIZE;
  const size = Number(value);
  if (!Number.isInteger(size) || size < 1 || size > 1_000_000) {
    throw new CliError(
      `--batch-size must be a whole number from 1 to 1000000; got ${JSON.stringify(value)}.`,
      2,
    );
  }
  return size;
}

/** Checks every file before sending anything, so a typo in the last name does not leave a half-done load. */
async function checkFiles(paths: readonly string[]): Promise<{ file: string; size: number }[]> {
  if (paths.length === 0) throw new CliError(`name at least one file of events.\n\n${usage}`, 2);
  const files: { file: string; size: number }[] = [];
  for (const file of paths) {
    let info;
    try {
      info = await stat(file);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      const why = code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'permission denied' : String(code);
      throw new CliError(`cannot read ${file}: ${why}. Nothing was sent.`, 2, { cause: error });
    }
    if (info.isDirectory())
      throw new CliError(`${file} is a directory; name the event files in it. Nothing was sent.`, 2);
    files.push({ file, size: info.size });
  }
  return files;
}
