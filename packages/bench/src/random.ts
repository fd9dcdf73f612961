/** A seeded pseudo-random source, so that two runs generate the same workload shape. */
export interface Random {
  /** A float in [0, 1). */
  next(): number;
  /** An integer in [0, bound). */
  int(bound: number): number;
}

/**
 * mulberry32: tiny, fast and good enough for picking jobs and datasets. Math.random cannot be seeded, and a
 * benchmark whose graph changes between runs cannot be compared with itself.
 */
export function createRandom(seed: number): Random {
  let state = seed >>> 0;
  const next = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return { next, int: (bound) => Math.floor(next() * bound) };
}
