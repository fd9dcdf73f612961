/** The version of this package; kept equal to package.json by a test. */
export const CLIENT_VERSION = '0.1.0';

/**
 * The default `producer` of events and `_producer` of facets built by this client: a URI naming the code
 * that produced the metadata, as the spec asks.
 */
export const DEFAULT_PRODUCER = `https://github.com/headwater/headwater/tree/v${CLIENT_VERSION}/packages/openlineage`;
