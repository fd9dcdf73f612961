import { readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../api/app.js';
import type { ServerConfig } from '../config/server-config.js';
import { ColumnGraph } from '../read-model/column-graph.js';
import { DatasetAliases } from '../read-model/aliases.js';
import { LineageGraph } from '../read-model/lineage-graph.js';
import { IngestFrontDoor } from '../accept/front-door.js';
import { ingestPolicy } from '../accept/redaction.js';
import { IngestPipeline } from '../accept/pipeline.js';
import { createValidator } from '../accept/validate.js';
import { openEmbeddedDb, openPostgresDb, stderrLog, storeEngine, type Db } from '../store/db.js';
import { StoreHealth } from '../store/availability.js';
import { StatisticsKeeper } from '../store/statistics.js';
import { migrate } from '../store/migrate.js';
import { ModelState } from '../store/model-state.js';
import { ReadModel } from '../store/read-model.js';
import { forwardWritesToWriter, replicaFrontDoor } from '../replica/forward.js';
import { ReadSide } from '../replica/read-side.js';
import { Replication } from '../replica/replication.js';
import { createForwarder, loadForwardConfig, type Forwarder } from '../streams/forwarder.js';
import {
  createKafkaIngest,
  type KafkaIngest,
  type KafkaIngestStats,
  type StreamLogger,
} from '../streams/kafka-ingest.js';
import { ForwardingFrontDoor } from './proxy.js';
import { instrumentDb, Metrics } from '../ops/metrics.js';
import { ApiKeyVerifier } from '../security/keys.js';
import { ReplicaCredential } from '../security/replica-credential.js';
import { RetentionKeeper } from '../ops/retention.js';
import { readAlertsDocument } from '../alerts/config.js';
import { AlertsSettings } from '../alerts/settings.js';
import { IncidentEngine, type AlertsLog } from '../alerts/incidents.js';
import { OutboxWorker } from '../alerts/outbox.js';
import { Previews, previewConfig } from './previews.js';

/** A running (or ready-to-listen) Headwater server. */
export interface HeadwaterServer {
  readonly app: FastifyInstance;
  readonly db: Db;
  readonly pipeline: IngestPipeline;
  /** The one way in for events (HTTP and Kafka ingest hand theirs here). */
  readonly frontDoor: IngestFrontDoor;
  /** The previews of this store (undefined on a preview's own server). */
  readonly previews: Previews | undefined;
  readonly graph: LineageGraph;
  readonly columnGraph: ColumnGraph;
  /** The writer's mirror of the model (runs ahead of the store while a batch is in flight). */
  readonly state: ModelState;
  /** What readers see: exactly what is committed. */
  readonly readModel: ReadModel;
  /** Its part among the replicas of its database (the embedded store's server always writes). */
  readonly replication: Replication;
  /** The Kafka consumer feeding the front door, when Kafka ingest is configured (started by listen()). */
  readonly kafka: KafkaIngest | undefined;
  /** Forwarding through sinks, when `forwardConfig` is set (started by listen()). */
  readonly forwarder: Forwarder | undefined;
  /** The Prometheus registry served at /metrics: other parts register their series here. */
  readonly metrics: Metrics;
  /** The retention window's passes, when `retentionDays` is set (started by listen()). */
  readonly retention: RetentionKeeper | undefined;
  /**
   * Incidents, their deliveries and the alerts configuration in force (started by listen(), at work on the writer
   * once a configuration is in force: `alertsConfig`, or one applied through the API).
   */
  readonly alerts: {
    readonly incidents: IncidentEngine;
    readonly outbox: OutboxWorker;
    readonly settings: AlertsSettings;
  };
  /** What the store runs on, for the start line: "PostgreSQL 18", "PGlite" or "PostgreSQL". */
  readonly storeEngine: string;
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
  JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
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

/** The Kafka consumer's counters as series of `metrics` (read when scraped). */
function observeKafka(metrics: Metrics, kafka: KafkaIngest): void {
  const series: [keyof KafkaIngestStats, string, string][] = [
    [
      'consumed',
      'headwater_kafka_messages_consumed',
      'Messages taken from the topics (a redelivered one counts again)',
    ],
    ['stored', 'headwater_kafka_events_stored', 'Events from Kafka stored'],
    ['duplicates', 'headwater_kafka_events_duplicate', 'Events from Kafka already stored'],
    ['deadLettered', 'headwater_kafka_messages_dead_lettered', 'Messages written to the dead-letter topic'],
    ['pauses', 'headwater_kafka_pauses', 'Times the partitions were paused because the store was away'],
    ['commits', 'headwater_kafka_offset_commits', 'Offsets committed'],
    [
      'commitsRefused',
      'headwater_kafka_offset_commits_refused',
      'Offset commits the group refused (a rebalance)',
    ],
  ];
  for (const [key, name, help] of series) {
    metrics.counter({
      name: `${name}_total`,
      help,
      collect() {
        this.reset();
        this.inc(Number(kafka.stats[key]));
      },
    });
  }
  metrics.gauge({
    name: 'headwater_kafka_consumer_lag',
    help: "Messages after the group's committed offset, per partition this server consumes",
    labelNames: ['topic', 'partition'],
    async collect() {
      const lags = await kafka.lag();
      // Partitions move between members: only those held now are series.
      this.reset();
      for (const { topic, partition, lag } of lags ?? [])
        this.set({ topic, partition: String(partition) }, lag);
    },
  });
  metrics.gauge({
    name: 'headwater_kafka_paused',
    help: '1 while the partitions are paused, waiting for the store',
    collect() {
      this.set(kafka.stats.paused ? 1 : 0);
    },
  });
}

/** What the store runs on, for the start line: "PostgreSQL 18", "PGlite" or "PostgreSQL". */
function engineName(db: Db): string {
  const { engine, version } = storeEngine(db);
  if (engine === 'pglite') return 'PGlite';
  return version === undefined ? 'PostgreSQL' : `PostgreSQL ${version}`;
}

/**
 * Loads the column graph, again after a second while the store cannot be read (the server started while it
 * went away), until it is in or the server closes.
 */
async function loadColumnGraph(
  columnGraph: ColumnGraph,
  db: Db,
  closed: () => boolean,
  log: { info: (message: string) => void; warn: (error: unknown, message: string) => void },
): Promise<void> {
  const started = performance.now();
  while (!closed()) {
    try {
      await columnGraph.load(db);
      log.info(`column lineage loaded in ${Math.round(performance.now() - started)} ms`);
      return;
    } catch (error) {
      if (closed()) return;
      log.warn(error, 'column lineage could not be loaded; trying again in 1 s');
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
  }
}

/** How a server is made besides its configuration. */
export interface ServerOptions {
  /**
   * The store, already open: a preview's (see previews.ts), whose server then has no previews of its own.
   * Otherwise the one the configuration names is opened.
   */
  readonly previewDb?: Db;
}

/** Opens the store, runs migrations, loads the graph and builds the app. */
export async function createServer(
  config: ServerConfig,
  options: ServerOptions = {},
): Promise<HeadwaterServer> {
  const metrics = new Metrics();
  const { previewDb } = options;
  const db = instrumentDb(
    previewDb ??
      (config.databaseUrl
        ? await openPostgresDb(config.databaseUrl)
        : await openEmbeddedDb(config.dataDir, {
            engine: config.embeddedEngine,
            log: stderrLog(config.logLevel),
          })),
    metrics,
  );
  // Set once the server closes (or fails to start): the column graph's load stops trying.
  let stopping = false;
  try {
    await migrate(db);
    // The commit feed's end before any state is read: replicas apply the entries after it on top (applying an
    // entry twice changes nothing), so nothing committed while the state loads is missed.
    const applied = await ReadSide.feedEnd(db);
    const writing = (await db.lead(undefined)) !== undefined;
    const state = new ModelState();
    // Dataset aliases, joined by both graphs where they read edges (see src/read-model/aliases.ts).
    const aliases = new DatasetAliases();
    const graph = new LineageGraph(aliases);
    // Column lineage is the largest part of the graph (millions of edges in a warehouse): it loads once the server
    // listens (or when a request first needs it), and only the requests that need it wait for it (see app.ts), so
    // a restart serves ingest and everything else seconds earlier, and nothing later than before.
    const columnGraph = new ColumnGraph({ loaded: false, aliases });
    let columnLoad: Promise<void> | undefined;
    const loadColumns = () =>
      (columnLoad ??= loadColumnGraph(columnGraph, db, () => stopping, {
        info: (message) => app.log.info(message),
        warn: (error, message) => app.log.warn({ err: error }, message),
      }));
    const readModel = new ReadModel();
    // The loads are independent: at once, the store reads one while this process takes in another, and builds
    // the app (compiling the routes' schemas is a good part of a second) while it waits for the store.
    const loaded = Promise.all([
      writing
        ? state.load(db).then(() => {
            // The mirror, just loaded, is exactly what is committed: the read model starts as a copy of it.
            readModel.copy(state);
          })
        : // A follower needs no writer's mirror until it takes over (the pipeline builds it then).
          ReadModel.load(db, readModel),
      graph.load(db),
      aliases.load(db),
    ]);
    // Awaited below; if building the app fails first, the loads' failure is not one to report.
    loaded.catch(() => undefined);
    const health = new StoreHealth({
      probe: () => db.probe(),
      onChange: (status, error) => {
        if (status.available) app.log.warn('the store is available again; ingest resumes');
        else app.log.error({ err: error }, `the store is unavailable (${status.reason}); ingest answers 503`);
      },
    });
    db.onLost((error) => health.markDown(error));
    const pipeline = new IngestPipeline(db, state, {
      health,
      onListenerError: (error) =>
        app.log.error({ err: error }, 'a committed batch or edit could not be applied to the read side'),
    });
    if (!writing) pipeline.forgetMirror();
    const readSide = new ReadSide(db, { model: readModel, graph, columnGraph, applied }, (error, message) =>
      app.log.warn({ err: error }, message),
    );
    // Made once the mirror is loaded (it starts from the last event id); no batch commits before.
    let statistics: StatisticsKeeper | undefined;
    pipeline.onCommit(async ({ changes, delta, seq }) => {
      await readSide.committed(seq, delta);
      if (statistics) {
        // One job sighting of kind 0 per run or job event, one dataset sighting of kind 2 per DatasetEvent.
        let events = 0;
        for (const sighting of changes.jobSightings.values()) if (sighting.kind === 0) events++;
        for (const sighting of changes.datasetSightings.values()) if (sighting.kind === 2) events++;
        statistics.committed(events);
      }
    });
    pipeline.onEdit((seq, edit) => readSide.edited(seq, edit));
    const replication = new Replication(db, pipeline, readSide, {
      info: (message) => app.log.info(message),
      warn: (object, message) => app.log.warn(object, message),
      error: (object, message) => app.log.error(object, message),
    });
    const validator = createValidator({ strict: config.strict, specDir: config.specDir });
    const policy = ingestPolicy(config.redaction);
    // Forwarding (serve --forward-config) sends what is stored through the proxy's sinks.
    const forwardLog: StreamLogger = {
      info: (object, message) => app.log.info(object, message),
      warn: (object, message) => app.log.warn(object, message),
      error: (object, message) => app.log.error(object, message),
    };
    let forwarder: Forwarder | undefined;
    const frontDoor = config.forwardConfig
      ? new ForwardingFrontDoor(
          validator,
          pipeline,
          (forwarder = createForwarder(loadForwardConfig(config.forwardConfig), {
            log: forwardLog,
            registry: metrics.registry,
          })),
          forwardLog,
          policy,
        )
      : new IngestFrontDoor(validator, pipeline, policy);
    observeIngest(metrics, pipeline, frontDoor);
    const previews =
      previewDb === undefined
        ? new Previews({
            location: { db, databaseUrl: config.databaseUrl, dataDir: config.dataDir },
            writing: () => replication.role === 'writer',
            open: (store) => createServer(previewConfig(config), { previewDb: store }),
            log: {
              info: (object, message) => app.log.info(object, message),
              warn: (object, message) => app.log.warn(object, message),
            },
          })
        : undefined;
    if (previews) frontDoor.divert(previews);
    const replicaCredential = new ReplicaCredential(db);
    // Read before anything starts, so that a configuration with problems stops the start with all of them.
    const alertsFile =
      config.alertsConfig === undefined ? undefined : readAlertsDocument(config.alertsConfig);
    let listening = false;
    const alerts = (() => {
      const log: AlertsLog = {
        info: (object, message) => app.log.info(object, message),
        warn: (object, message) => app.log.warn(object, message),
        error: (object, message) => app.log.error(object, message),
      };
      // Only the writer opens incidents and sends; a follower that takes over reconciles everything first.
      const epoch = () => (replication.role === 'writer' ? db.epoch : undefined);
      const outbox = new OutboxWorker({ db, config: undefined, epoch, log });
      const incidents = new IncidentEngine({
        db,
        config: undefined,
        epoch,
        log,
        onDeliveries: () => outbox.wake(),
        source: async () => {
          if (!columnGraph.complete) await loadColumns();
          return { db, state: readModel, graph, columnGraph: columnGraph.analysisView };
        },
      });
      const settings = new AlertsSettings({
        db,
        epoch,
        file: alertsFile,
        onConfig: (alertsConfig) => {
          outbox.configure(alertsConfig);
          incidents.configure(alertsConfig);
        },
      });
      pipeline.onCommit(({ changes }) => {
        const datasets = new Set<number>();
        for (const assertion of changes.assertions.values()) datasets.add(assertion.datasetId);
        incidents.touched(changes.runs.values(), datasets);
      });
      replication.onRole((role) => {
        // The writer at start puts its configuration in force in listen().
        if (role !== 'writer' || !listening) return;
        settings.takeOver().catch((error: unknown) => {
          app.log.error({ err: error }, 'the alerts configuration could not be put in force; alerts are off');
          settings.off();
        });
      });
      return { incidents, outbox, settings };
    })();
    const app = await buildApp({
      config,
      db,
      state: readModel,
      graph,
      columnGraph,
      columnLineageLoaded: () => (columnGraph.complete ? undefined : loadColumns()),
      pipeline,
      validator,
      frontDoor,
      health,
      replication,
      version,
      metrics,
      keys: new ApiKeyVerifier(db, db.kind === 'postgres'),
      replicaCredential,
      incidents: alerts.incidents,
      alertsSettings: alerts.settings,
      previews,
    });
    forwardWritesToWriter(app, replication);
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
    await Promise.all([app.ready(), loaded]);
    if (db.kind === 'embedded') statistics = new StatisticsKeeper(db, state.next.event - 1);
    await replication.start({ mirrorLoaded: writing });
    await previews?.start();
    // Every replica consumes (each a member of the group); a follower hands its events to the writer.
    const kafka =
      config.kafka &&
      createKafkaIngest({
        ...config.kafka,
        frontDoor: replicaFrontDoor(replication, frontDoor, replicaCredential, app.log),
        log: app.log,
      });
    if (kafka) observeKafka(metrics, kafka);
    const retention =
      config.retentionDays === undefined
        ? undefined
        : new RetentionKeeper(db, pipeline, metrics, {
            days: config.retentionDays,
            intervalMs: config.retentionIntervalMs,
            log: {
              info: (object, message) => app.log.info(object, message),
              error: (object, message) => app.log.error(object, message),
            },
          });
    let closing: Promise<void> | undefined;
    const server: HeadwaterServer = {
      app,
      db,
      pipeline,
      frontDoor,
      previews,
      graph,
      columnGraph,
      get state() {
        return pipeline.mirror;
      },
      readModel,
      replication,
      kafka,
      forwarder,
      metrics,
      retention,
      alerts,
      storeEngine: engineName(db),
      url: undefined,
      async listen() {
        await app.assertSafeToServe();
        const address = await app.listen({ port: config.port, host: config.host });
        void loadColumns();
        server.url = address.replace('[::1]', 'localhost');
        await replication.advertise(config.advertiseUrl ?? server.url);
        forwarder?.start();
        retention?.start();
        listening = true;
        if (replication.role === 'writer') await alerts.settings.startWriting();
        alerts.incidents.start();
        alerts.outbox.start();
        await kafka?.start().catch((error: unknown) => {
          app.log.error({ err: error }, 'Kafka ingest could not start');
          throw error;
        });
        return server.url;
      },
      close() {
        stopping = true;
        closing ??= (async () => {
          // Stop accepting; requests already received finish (new ones on kept-alive sockets get 503).
          const appClosed = app.close();
          const deadline = Date.now() + SHUTDOWN_GRACE_MS;
          while (inFlight > 0 && Date.now() < deadline)
            await new Promise((resolve) => setTimeout(resolve, 20));
          // Stored events have their offsets committed before the pipeline stops taking events.
          await kafka?.close();
          await retention?.close();
          await pipeline.close();
          await previews?.close();
          await alerts.incidents.close();
          await alerts.outbox.close();
          await replication.close();
          // Sockets that went idle after close() began would hold the server open until their keep-alive
          // timeout; every request on them has been answered, so drop them.
          app.server.closeAllConnections();
          await appClosed;
          await forwarder?.close();
          await statistics?.close();
          health.close();
          await db.close();
          await columnLoad;
        })();
        return closing;
      },
    };
    return server;
  } catch (error) {
    stopping = true;
    await db.close();
    throw error;
  }
}
