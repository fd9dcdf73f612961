import { statfs } from 'node:fs/promises';

/** Free disk an embedded store needs before it is called writable: a batch, its WAL, and a checkpoint. */
export const MIN_FREE_BYTES = 32 * 1024 * 1024;

/** The disk under an embedded store is (nearly) full; SQLSTATE disk_full, so that it is answered as unavailable. */
export class DiskFullError extends Error {
  readonly code = '53100';

  constructor(message: string) {
    super(message);
    this.name = 'DiskFullError';
  }
}

/** MiB free on the disk that holds `dir`. */
export async function freeBytes(dir: string): Promise<number> {
  const { bavail, bsize } = await statfs(dir);
  return bavail * bsize;
}

/**
 * A check run before each write to an embedded store in `dir`: it rejects with {@link DiskFullError} while the
 * disk has less than {@link MIN_FREE_BYTES} free, so that ingest answers 503 (and says why) before the store
 * meets a full disk. statfs costs microseconds, but a batch is written every few ms under load: it looks at most
 * every 200 ms while there is room.
 */
export function freeSpaceGuard(dir: string): () => Promise<void> {
  let checkedAt = 0;
  let lastCheck: Promise<void> = Promise.resolve();
  return () => {
    const now = Date.now();
    if (now - checkedAt < 200) return lastCheck;
    checkedAt = now;
    lastCheck = freeBytes(dir).then((free) => {
      if (free < MIN_FREE_BYTES) {
        checkedAt = 0;
        throw new DiskFullError(
          `no space left on device: ${Math.floor(free / 1024 / 1024)} MiB free where the embedded store lives ` +
            `(${dir}); it needs ${MIN_FREE_BYTES / 1024 / 1024} MiB. Free some space: ingest resumes by itself.`,
        );
      }
    });
    return lastCheck;
  };
}
