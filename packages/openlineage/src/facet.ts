import type { FacetDescriptor } from './generated/model.js';
import type { BaseFacet } from './generated/model.js';
import { DEFAULT_PRODUCER } from './producer.js';

/** The fields of a facet that its builder takes: everything but `_producer` and `_schemaURL`. */
export type FacetFields<T extends BaseFacet> = Omit<T, '_producer' | '_schemaURL'>;

/** Options of every facet builder. */
export interface FacetOptions {
  /**
   * The `_producer` URI of the facet.
   * @default DEFAULT_PRODUCER (this client)
   */
  readonly producer?: string;
}

/** A function that builds one facet type, and knows that type's key, container and `_schemaURL`. */
export interface FacetBuilder<T extends BaseFacet, D extends FacetDescriptor = FacetDescriptor> {
  (fields: FacetFields<T>, options?: FacetOptions): T;
  /** The key under which the facet is attached. */
  readonly key: D['key'];
  /** The facet map the facet belongs in. */
  readonly container: D['container'];
  /** The value this builder writes into `_schemaURL`. */
  readonly schemaURL: D['schemaURL'];
}

/**
 * Makes a facet builder from a descriptor. The generated builders (`sqlJobFacet`, `schemaDatasetFacet`...)
 * are made with it; use it for your own custom facets too.
 *
 * @example
 * ```ts
 * interface MyRunFacet extends RunFacet { attempt: number }
 * const myRunFacet = defineFacet<MyRunFacet>({
 *   key: 'myCompany_attempt',
 *   container: 'run',
 *   schemaURL: 'https://example.com/schemas/MyRunFacet.json#/$defs/MyRunFacet',
 *   source: 'custom',
 * });
 * const facet = myRunFacet({ attempt: 2 });
 * ```
 */
export function defineFacet<T extends BaseFacet, D extends FacetDescriptor = FacetDescriptor>(
  descriptor: D,
): FacetBuilder<T, D> {
  const build = (fields: FacetFields<T>, options?: FacetOptions): T => {
    const facet: Record<string, unknown> = {
      _producer: options?.producer ?? DEFAULT_PRODUCER,
      _schemaURL: descriptor.schemaURL,
    };
    // Untyped callers may pass `undefined` values; dropping them keeps the facet equal to its JSON form.
    for (const [name, value] of Object.entries(fields)) {
      if (value !== undefined && name !== '_producer' && name !== '_schemaURL') facet[name] = value;
    }
    return facet as T;
  };
  return Object.assign(build, {
    key: descriptor.key,
    container: descriptor.container,
    schemaURL: descriptor.schemaURL,
  });
}
