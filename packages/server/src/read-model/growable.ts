/**
 * A growable array of numbers in one typed array: 4 bytes a value for int32 (8 for float64), no object per value,
 * and outside V8's heap, so a graph of millions of entries neither costs the garbage collector nor leaves the
 * backing stores of every growth of a JavaScript array behind as garbage. Read and write `values` directly, up
 * to `length`; `values` is replaced when the array grows.
 */
export class Growable<A extends Int32Array | Float64Array> {
  values: A;
  length = 0;
  readonly #make: (size: number) => A;

  constructor(make: (size: number) => A) {
    this.#make = make;
    this.values = make(16);
  }

  /** Appends `value` and returns its index. */
  push(value: number): number {
    if (this.length === this.values.length) this.reserve(this.length + 1);
    this.values[this.length] = value;
    return this.length++;
  }

  /** Makes room for at least `size` values without growing again. */
  reserve(size: number): void {
    if (size <= this.values.length) return;
    const next = this.#make(Math.max(size, Math.ceil(this.values.length * 1.5)));
    next.set(this.values.subarray(0, this.length));
    this.values = next;
  }
}

/** A growable int32 array. */
export const int32s = (): Growable<Int32Array> => new Growable((size) => new Int32Array(size));
/** A growable float64 array (times in ms since the epoch). */
export const float64s = (): Growable<Float64Array> => new Growable((size) => new Float64Array(size));
