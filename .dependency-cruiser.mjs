// Which way imports may run. `npm run lint` checks the tree against these rules (type-only imports included),
// and packages/server/test/layers.test.ts shows that a wrong-way import fails them.

/**
 * The server's folders, top first. A folder may import the folders below it and never one above it, so no two
 * folders can import each other. An event's path reads down it: `accept` takes an event in, `derive` works out
 * what it changes, `store` writes it, `read-model` answers from what was committed, `api` serves it.
 */
export const SERVER_LAYERS = [
  'cli', // commands
  'servers', // the processes: the lineage server and the ingest proxy, wired from their parts
  'api', // HTTP routes
  'replica', // read replicas and forwarding to the writer
  'config', // the server's configuration, from flags, environment and files
  'streams', // Kafka ingest and the proxy's forwarder
  'security', // keys, OIDC, scopes, redaction of answers
  'ops', // metrics and retention
  'alerts', // incident delivery: alerts configuration, messages, channels (webhook, Slack, e-mail), retries
  'analysis', // root cause, impact, diffs, quality
  'accept', // the front door: validation, limits, redaction of events, the ingest pipeline
  'derive', // an event's changes to the lineage model, as a changeset
  'read-model', // the in-memory lineage and column graphs
  'store', // PostgreSQL: every SQL statement, the writer, migrations, backups
  'model', // the lineage model's rules: run state, execution, assertions, identities, normalised events
  'core', // errors, ids, times, JSON paths, configuration reading
];

const server = 'packages/server/src';
const escape = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** One rule per layer: nothing in it imports a layer above it. */
const layerRules = SERVER_LAYERS.slice(1).map((layer, index) => ({
  name: `layer-${layer}`,
  comment: `${server}/${layer} is below ${SERVER_LAYERS.slice(0, index + 1).join(', ')}: it may not import them`,
  severity: 'error',
  from: { path: `^${escape(server)}/${escape(layer)}/`, pathNot: '\\.test\\.ts$' },
  to: {
    path: `^${escape(server)}/(${SERVER_LAYERS.slice(0, index + 1)
      .map(escape)
      .join('|')})/`,
  },
}));

/** @type {import('dependency-cruiser').IConfiguration} */
export default {
  forbidden: [
    ...layerRules,
    {
      name: 'server-folder-known',
      comment: `every folder of ${server} has a place in SERVER_LAYERS (.dependency-cruiser.mjs)`,
      severity: 'error',
      from: { path: `^${escape(server)}/` },
      to: {
        path: `^${escape(server)}/[^/]+/`,
        pathNot: `^${escape(server)}/(${SERVER_LAYERS.map(escape).join('|')})/`,
      },
    },
    {
      name: 'server-root-entry-only',
      comment: `${server}/index.ts is the package's entry: nothing inside the server imports it`,
      severity: 'error',
      from: { path: `^${escape(server)}/` },
      to: { path: `^${escape(server)}/index\\.ts$` },
    },
    {
      name: 'no-circular',
      comment:
        "no module reaches itself through imports that run code (two modules of one folder may name each other's types)",
      severity: 'error',
      from: {},
      to: { circular: true, viaOnly: { dependencyTypesNot: ['type-only'] } },
    },
    {
      name: 'client-alone',
      comment: 'the TypeScript client depends on no other package of the project',
      severity: 'error',
      from: { path: '^packages/openlineage/' },
      to: { path: '^packages/(server|web|bench|test-support)/' },
    },
    {
      name: 'web-apart-from-server',
      comment: 'the explorer takes only types from the server, never code that would run in the browser',
      severity: 'error',
      from: { path: '^packages/web/src/' },
      to: { path: '^packages/(server|bench)/', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'nothing-imports-bench',
      comment: 'the benchmark depends on the server and test-support; no other package imports it',
      severity: 'error',
      from: { pathNot: '^packages/bench/' },
      to: { path: '^packages/bench/' },
    },
    {
      name: 'test-support-alone',
      comment: "test-support is shared by the server's tests and the benchmark: it imports neither",
      severity: 'error',
      from: { path: '^packages/test-support/' },
      to: { path: '^packages/(server|bench|web)/' },
    },
    {
      name: 'sources-without-tests',
      comment: 'shipped code never imports a test or its helpers',
      severity: 'error',
      from: { path: '^packages/[^/]+/src/', pathNot: '\\.test\\.tsx?$' },
      to: { path: '(^packages/[^/]+/test/)|(\\.test\\.tsx?$)' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)(dist|node_modules|generated)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.base.json' },
    combinedDependencies: true,
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'types', 'default'],
      extensions: ['.ts', '.tsx', '.js', '.mjs'],
    },
  },
};
