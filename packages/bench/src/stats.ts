import { readdirSync, readFileSync } from 'node:fs';
import type { ServerProcess } from './server-process.js';

/** A span of CLOCK_MONOTONIC in µs: the clock V8 stamps `--cpu-prof` samples with, shared by every process. */
export interface TimeWindow {
  readonly startUs: number;
  readonly endUs: number;
}

/** Now, on the clock of {@link TimeWindow}. */
export const monotonicUs = (): number => Number(process.hrtime.bigint() / 1000n);

/** Latency percentiles in milliseconds. */
export interface Percentiles {
  readonly p50: number;
  readonly p95: number;
  readonly p99: number;
  readonly max: number;
}

/** Nearest-rank percentiles of `samples` (ms); NaN when there are none. */
export function percentiles(samples: readonly number[]): Percentiles {
  if (samples.length === 0) return { p50: NaN, p95: NaN, p99: NaN, max: NaN };
  const sorted = Float64Array.from(samples).sort();
  const rank = (p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
  return { p50: rank(50), p95: rank(95), p99: rank(99), max: sorted[sorted.length - 1]! };
}

/** CPU used during a measurement, as a percentage of one core (a 2-core machine has 200 %). */
export interface CpuUse {
  /** The server child process (with the embedded store, this includes PGlite). */
  readonly serverPct: number | undefined;
  /**
   * The PostgreSQL serving the server: every process named `postgres` on this machine for an external store;
   * for the embedded store, the server's own PostgreSQL (the `postgres` processes below it).
   */
  readonly postgresPct: number | undefined;
  /** This process, the load generator. */
  readonly loadPct: number;
  /**
   * Everything else on the machine (other processes, the kernel): a busy neighbour on a 2-core machine takes
   * cores the server needs, so a measurement with a high figure here understates the server.
   */
  readonly otherPct: number | undefined;
}

/**
 * Starts a CPU measurement of the server and of the PostgreSQL serving it (an external one, or the embedded
 * store's, which runs as the server's child processes; any other PostgreSQL's CPU belongs to someone else and
 * counts as other processes); call the returned function when the window ends.
 */
export function measureCpu(server: Pick<ServerProcess, 'pid' | 'usesPostgres'>): () => CpuUse {
  const serverPid = server.pid;
  const startedAt = performance.now();
  const load = process.cpuUsage();
  const serverTicks = processTicks(serverPid);
  const below = server.usesPostgres ? undefined : serverPid;
  const postgres = postgresTicks(below);
  const machine = machineTicks();
  return () => {
    const elapsedMs = performance.now() - startedAt;
    const loadUsage = process.cpuUsage(load);
    const pct = (ms: number) => (100 * ms) / elapsedMs;
    const serverNow = processTicks(serverPid);
    const postgresNow = postgresTicks(below);
    const machineNow = machineTicks();
    const serverPct =
      serverTicks !== undefined && serverNow !== undefined
        ? pct((serverNow - serverTicks) * TICK_MS)
        : undefined;
    const postgresPct =
      postgres !== undefined && postgresNow !== undefined
        ? pct(ticksSince(postgres, postgresNow) * TICK_MS)
        : undefined;
    const loadPct = pct((loadUsage.user + loadUsage.system) / 1000);
    const machinePct =
      machine !== undefined && machineNow !== undefined ? pct((machineNow - machine) * TICK_MS) : undefined;
    const otherPct =
      machinePct === undefined
        ? undefined
        : Math.max(0, machinePct - (serverPct ?? 0) - (postgresPct ?? 0) - loadPct);
    return { serverPct, postgresPct, loadPct, otherPct };
  };
}

// /proc counts CPU time in clock ticks, USER_HZ, which is 100 on every Linux architecture Node supports.
const TICK_MS = 10;

/** utime + stime of a process from /proc/<pid>/stat, in ticks; undefined off Linux or once it has exited. */
function processTicks(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may contain spaces and parentheses; the fields after the last ')' are fixed.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return undefined;
  }
}

/** Busy ticks of the whole machine (all cores) from the `cpu` line of /proc/stat. */
function machineTicks(): number | undefined {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!;
    // user nice system idle iowait irq softirq steal ...: everything but idle and iowait is busy.
    const [user, nice, system, , , irq, softirq, steal] = line.trim().split(/\s+/).slice(1).map(Number);
    return [user, nice, system, irq, softirq, steal].reduce<number>((sum, value) => sum + (value ?? 0), 0);
  } catch {
    return undefined;
  }
}

/**
 * CPU ticks of each PostgreSQL process, by pid. Backends are separate processes owned by another user, but
 * /proc/<pid>/stat is world-readable.
 */
function postgresTicks(below?: number): Map<number, number> | undefined {
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return undefined;
  }
  const ticks = new Map<number, number>();
  const parents = new Map<number, number>();
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      parents.set(Number(entry), Number(fields[1]));
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      if (name === 'postgres') ticks.set(Number(entry), Number(fields[11]) + Number(fields[12]));
    } catch {
      // The process exited between readdir and read.
    }
  }
  if (below !== undefined) {
    const descends = (pid: number): boolean => {
      for (let at = parents.get(pid); at !== undefined && at > 1; at = parents.get(at))
        if (at === below) return true;
      return false;
    };
    for (const pid of ticks.keys()) if (!descends(pid)) ticks.delete(pid);
  }
  return ticks;
}

/**
 * Ticks used between two readings, per process: a backend that started meanwhile counts in full, one that exited
 * (the pool closes idle connections) loses only its ticks inside the window, never the history it took along.
 */
function ticksSince(before: ReadonlyMap<number, number>, after: ReadonlyMap<number, number>): number {
  let total = 0;
  for (const [pid, ticks] of after) total += ticks - (before.get(pid) ?? 0);
  return total;
}
