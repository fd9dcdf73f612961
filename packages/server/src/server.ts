import { readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import { buildApp } from './api/app.js';
import type { ServerConfig } from './config.js';
import { ColumnGraph } from './graph/column-graph.js';
import { LineageGraph } from './graph/lineage-graph.js';
import { IngestFrontDoor } from './ingest/front-door.js';
import { IngestPipeline } from './ingest/pipeline.js';
import { createValidator } from './ingest/validate.js';
import { openEmbeddedDb, openPostgresDb, type Db } from './store/db.js';
import { StoreHealth } from './store/availability.js';
import { StatisticsKeeper } from './store/statistics.js';
import { migrate } from './store/migrate.js';
import { ModelState } from './store/model-state.js';
import { ReadModel } from './store/read-model.js';
import { instrumentDb, Metrics } from './ops/metrics.js';
import { ApiKeyVerifier } from './security/keys.js';

/** A running (or ready-to-listen) Headwater server. */
export interface HeadwaterServer {
  readonly app: FastifyInstance;
  readonly db: Db;
  readonly pipeline: IngestPipeline;
  readonly graph: LineageGraph;
  readonly columnGraph: ColumnGraph;
  /** The writer's mirror of the model (runs ahead of the store while a batch is in flight). */
  readonly state: ModelState;
  /** What readers see: exactly what is committed. */
  readonly readModel: ReadModel;
  /** The Prometheus registry served at /metrics: other parts register their series here. */
  readonly metrics: Metrics;
  /** The base URL once listening. */
  url: string | undefined;
  /** Starts accepting connections on config.host:config.port. */
  listen(): Promise<string>;
  /** Stops taking requests, commits everything acknowledged or in flight, and closes the store. */
  close(): Promise<void>;
}

/** How long shutdown waits for requests already received to be answered. */
const SHUTDOWN_GRACE_MS = 10_000;

/** The package version, read from package.json. */
export const version = (
  JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }
).version;

/** Feeds the ingest series of `metrics`: outcomes, queue depth, group commit sizes and times. */
function observeIngest(metrics: Metrics, pipeline: IngestPipeline, frontDoor: IngestFrontDoor): void {
  frontDoor.onOutcomes((values, outcomes) => metrics.countOutcomes(values, outcomes));
  pipeline.onWrite((events, ms, failed) => {
    if (failed) return;
    metrics.commitGroupEvents.observe(events);
    metrics.commitDuration.observe(ms / 1000);
  });
  metrics.gauge({
    name: 'headwater_ingest_queue_events',
    help: 'Events accepted and waiting to be committed',
    collect() {
      this.set(pipeline.queuedEvents);
    },
  });
}

/** Opens the store, runs migrations, loads the graph and builds the app. */
export async function createServer(config: ServerConfig): Promise<HeadwaterServer> {
  const metrics = new Metrics();
  const db = instrumentDb(
    config.databaseUrl ? await openPostgresDb(config.databaseUrl) : await openEmbeddedDb(config.dataDir),
    metrics,
  );
  try {
    await migrate(db);
    const state = new ModelState();
    await state.load(db);
    // The mirror, just loaded, is exactly what is committed: the read model starts as a copy of it.
    const readModel = new ReadModel();
    readModel.copy(state);
    const graph = new LineageGraph();
    await graph.load(db);
    const columnGraph = new ColumnGraph();
    await columnGraph.load(db);
    const health = new StoreHealth({
      probe: () => db.probe(),
      onChange: (status, error) => {
        if (status.available) app.log.warn('the store is available again; ingest resumes');
        else app.log.error({ err: error }, `the store is unavailable (${status.reason}); ingest answers 503`);
      },
    });
    db.onLost((error) => health.markDown(error));
    const pipeline = new IngestPipeline(db, state, { health });
    const statistics = db.kind === 'embedded' ? new StatisticsKeeper(db, state.next.event - 1) : undefined;
    // Jobs whose cutoff must be read again from the store (rare: a late event moved a completed run's start).
    const refresh = new Set<number>();
    pipeline.onCommit(async (changes) => {
      readModel.apply(changes);
      for (const jobId of graph.apply(changes)) refresh.add(jobId);
      if (refresh.size > 0) {
        try {
          await graph.refresh(db, [...refresh]);
          refresh.clear();
        } catch (error) {
          // Tried again after the next commit.
          app.log.warn({ err: error }, 'could not refresh the lineage of jobs whose cutoff moved back');
        }
      }
      columnGraph.apply(changes);
      if (statistics) {
        // One job sighting of kind 0 per run or job event, one dataset sighting of kind 2 per DatasetEvent.
        let events = 0;
        for (const sighting of changes.jobSightings.values()) if (sighting.kind === 0) events++;
        for (const sighting of changes.datasetSightings.values()) if (sighting.kind === 2) events++;
        statistics.committed(events);
      }
    });
    const validator = createValidator(
      config.strict && config.specDir ? { strict: true, specDir: config.specDir } : { strict: false },
    );
    const frontDoor = new IngestFrontDoor(validator, pipeline);
    observeIngest(metrics, pipeline, frontDoor);
    const app = await buildApp({
      config,
      db,
      state: readModel,
      graph,
      columnGraph,
      pipeline,
      validator,
      frontDoor,
      health,
      version,
      metrics,
      keys: new ApiKeyVerifier(db, db.kind === 'postgres'),
    });
    let inFlight = 0;
    app.addHook('onRequest', (_request, _reply, done) => {
      inFlight++;
      done();
    });
    app.addHook('onResponse', (_request, _reply, done) => {
      inFlight--;
      done();
    });
    app.addHook('onRequestAbort', (_request, done) => {
      inFlight--;
      done();
    });
    let closing: Promise<void> | undefined;
    const server: HeadwaterServer = {
      app,
      db,
      pipeline,
      graph,
      columnGraph,
      get state() {
        return pipeline.mirror;
      },
      readModel,
      metrics,
      url: undefined,
      async listen() {
        const address = await app.listen({ port: config.port, host: config.host });
        server.url = address.replace('[::1]', 'localhost');
        return server.url;
      },
      close() {
        closing ??= (async () => {
          // Stop accepting; requests already received finish (new ones on kept-alive sockets get 503).
          const appClosed = app.close();
          const deadline = Date.now() + SHUTDOWN_GRACE_MS;
          while (inFlight > 0 && Date.now() < deadline)
            await new Promise((resolve) => setTimeout(resolve, 20));
          await pipeline.close();
          // Sockets that went idle after close() began would hold the server open until their keep-alive
          // timeout; every request on them has been answered, so drop them.
          app.server.closeAllConnections();
          await appClosed;
          await statistics?.close();
          health.close();
          await db.close();
        })();
        return closing;
      },
    };
    return server;
  } catch (error) {
    await db.close();
    throw error;
  }
}
