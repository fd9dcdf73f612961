import type { ServerConfig } from '../config/server-config.js';
import type { IngestFrontDoor } from '../accept/front-door.js';
import type { IngestPipeline } from '../accept/pipeline.js';
import type { Validator } from '../accept/validate.js';
import type { ColumnGraph } from '../read-model/column-graph.js';
import type { LineageGraph } from '../read-model/lineage-graph.js';
import type { StoreHealth } from '../store/availability.js';
import type { Replication } from '../replica/replication.js';
import type { Db } from '../store/db.js';
import type { ReadModel } from '../store/read-model.js';
import type { Metrics } from '../ops/metrics.js';
import type { ApiKeyVerifier } from '../security/keys.js';
import type { ReplicaCredential } from '../security/replica-credential.js';
import type { IncidentEngine } from '../alerts/incidents.js';
import type { AlertsSettings } from '../alerts/settings.js';
import type { PreviewHost } from './previews-routes.js';

/**
 * What the HTTP layer needs from the rest of the server, as buildApp receives it. Each route module declares the
 * part it needs (its *RouteDeps) and is registered with this whole.
 */
export interface AppDeps {
  readonly config: ServerConfig;
  readonly db: Db;
  /** What is committed: names and ids for readers (never the writer's mirror, which runs ahead of the store). */
  readonly state: ReadModel;
  readonly graph: LineageGraph;
  readonly columnGraph: ColumnGraph;
  /**
   * Until the column graph is in (it loads after start): a promise of it, which starts the load if need be;
   * undefined once it is in.
   */
  readonly columnLineageLoaded: () => Promise<void> | undefined;
  /** The writer. Routes take only the edits they make (putNamespace, hide, tag, ...), each by its own name. */
  readonly pipeline: IngestPipeline;
  readonly validator: Validator;
  /** The one way in for events: limits, validation, normalisation, group commit, an outcome per event. */
  readonly frontDoor: IngestFrontDoor;
  /** Whether the store can be reached and written now. */
  readonly health: StoreHealth;
  /** This server's part among the replicas of its database, and the read side it keeps in step. */
  readonly replication: Replication;
  /** The package version. */
  readonly version: string;
  /** The Prometheus registry served at /metrics, which other parts register their series into. */
  readonly metrics: Metrics;
  /** Checks API keys (and tells whether any exists, which turns authentication on). */
  readonly keys: ApiKeyVerifier;
  /** The credential replicas of this store present to each other (forwarded Kafka batches). */
  readonly replicaCredential: ReplicaCredential;
  /** The incident engine (idle while no alerts configuration is in force). */
  readonly incidents: IncidentEngine;
  /** The alerts configuration in force, and the way to change it. */
  readonly alertsSettings: AlertsSettings;
  /** The previews of this store (undefined on a preview's own server). */
  readonly previews: PreviewHost | undefined;
}
