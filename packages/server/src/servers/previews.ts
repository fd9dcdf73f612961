/**
 * Previews: a pull request's pipeline run apart from production, to be diffed against it before it merges.
 *
 * A preview is a Headwater of its own inside this process: its own store (store/preview-store.ts), read model,
 * graphs and routes, opened when first needed. The production front door hands it the events that are its
 * (model/previews.ts says which), so they never reach production's graph, search, statistics, incidents or
 * retention; `?preview=NAME` on a read is answered by the preview's own routes. Only the writer opens previews: a
 * follower forwards both (replica/forward.ts).
 *
 * Memory: each open preview holds its own graph (a pull request's pipeline, small beside production's) and its
 * routes; one unused for IDLE_MS is closed, and the registry holds one row per preview. So what previews cost
 * grows with the previews in use, not with their history or production's.
 */
import type { FastifyInstance } from 'fastify';
import type { EventDivert, EventOutcome } from '../accept/front-door.js';
import { HeadwaterError } from '../core/errors.js';
import type { NormalizedEvent } from '../model/normalize.js';
import { previewOfEvent, type PreviewInput } from '../model/previews.js';
import type { Db } from '../store/db.js';
import {
  dropPreviewStore,
  openPreviewStore,
  PREVIEW_NAME,
  type StoreLocation,
} from '../store/preview-store.js';
import {
  deletePreview,
  expiredPreviews,
  findPreview,
  insertPreview,
  listPreviews,
  type PreviewRecord,
} from '../store/queries/previews.js';
import type { DiffSide } from '../analysis/preview-diff.js';
import type { ServerConfig } from '../config/server-config.js';
import type { HeadwaterServer } from './server.js';

/** How previews are opened and told about: given by server.ts. */
export interface PreviewsOptions {
  readonly location: StoreLocation;
  /** Whether this process is the writer now (only the writer opens previews and expires them). */
  readonly writing: () => boolean;
  /** Opens the Headwater of a preview on its store (server.ts's createServer, made for a preview). */
  readonly open: (db: Db) => Promise<HeadwaterServer>;
  readonly log: {
    info(object: object, message: string): void;
    warn(object: object, message: string): void;
  };
}

/** A preview unused this long is closed (opened again on its next event or read). */
const IDLE_MS = 10 * 60_000;
/** How often expired previews are removed, idle ones closed and the registry read again. */
const SWEEP_MS = 30_000;

/** The previews of one production store. */
export class Previews implements EventDivert {
  readonly #options: PreviewsOptions;
  /** The registry as last read: what routing matches events against. */
  #registry: PreviewRecord[] = [];
  readonly #open = new Map<string, { server: Promise<HeadwaterServer>; usedAt: number }>();
  #timer: NodeJS.Timeout | undefined;
  #closed = false;

  constructor(options: PreviewsOptions) {
    this.#options = options;
  }

  /** Reads the registry, and then keeps it read and sweeps expired and idle previews. */
  async start(): Promise<void> {
    await this.#reload();
    this.#timer = setInterval(() => void this.sweep(), SWEEP_MS);
    this.#timer.unref();
  }

  async #reload(): Promise<void> {
    this.#registry = await listPreviews(this.#options.location.db);
  }

  /** Removes the expired previews (on the writer), closes idle ones and reads the registry again. */
  async sweep(): Promise<void> {
    try {
      await this.#reload();
      if (this.#options.writing())
        for (const name of await expiredPreviews(this.#options.location.db, new Date())) {
          await this.remove(name);
          this.#options.log.info({ preview: name }, `preview ${name} expired and was removed`);
        }
      const now = Date.now();
      for (const [name, open] of this.#open)
        if (now - open.usedAt > IDLE_MS) {
          this.#open.delete(name);
          await (await open.server.catch(() => undefined))?.close();
        }
    } catch (error) {
      this.#options.log.warn({ err: error }, 'previews could not be swept; trying again');
    }
  }

  /** The registered previews, by name. */
  list(): Promise<PreviewRecord[]> {
    return listPreviews(this.#options.location.db);
  }

  /** One preview, or undefined. */
  get(name: string): Promise<PreviewRecord | undefined> {
    return findPreview(this.#options.location.db, name);
  }

  /** Registers a preview; CONFLICT when its name or job namespace is another's. */
  async create(input: PreviewInput, by: string): Promise<PreviewRecord> {
    if (!PREVIEW_NAME.test(input.name))
      throw new HeadwaterError(
        'BAD_REQUEST',
        `${JSON.stringify(input.name)} is not a preview name: lower-case letters, digits and inner dashes, at ` +
          'most 40 characters.',
      );
    if (input.jobNamespace === input.baseNamespace)
      throw new HeadwaterError(
        'BAD_REQUEST',
        `The preview's job namespace must not be production's (${input.baseNamespace}): its events would ` +
          "leave production's graph.",
      );
    const now = new Date();
    const record: PreviewRecord = {
      name: input.name,
      jobNamespace: input.jobNamespace,
      baseNamespace: input.baseNamespace,
      pullRequest: input.pullRequest,
      commitSha: input.commitSha,
      mappings: [...input.mappings],
      createdAt: now,
      createdBy: by,
      expiresAt: input.ttlMs === null ? null : new Date(now.getTime() + input.ttlMs),
    };
    if (!(await insertPreview(this.#options.location.db, record))) {
      const taken = (await this.list()).find(
        (preview) => preview.name === input.name || preview.jobNamespace === input.jobNamespace,
      );
      throw new HeadwaterError(
        'CONFLICT',
        taken?.name === input.name
          ? `A preview named ${input.name} exists; delete it first or choose another name.`
          : `Preview ${taken?.name ?? '?'} has job namespace ${input.jobNamespace}.`,
      );
    }
    await this.#reload();
    return (await this.get(input.name)) ?? record;
  }

  /** Closes and deletes a preview and everything in its store: true if it existed. */
  async remove(name: string): Promise<boolean> {
    const open = this.#open.get(name);
    this.#open.delete(name);
    await (await open?.server.catch(() => undefined))?.close();
    const existed = await deletePreview(this.#options.location.db, name);
    this.#registry = this.#registry.filter((preview) => preview.name !== name);
    await dropPreviewStore(this.#options.location, name);
    return existed;
  }

  /** The preview's own Headwater, opened if need be; NOT_FOUND for a preview not registered. */
  async server(name: string): Promise<HeadwaterServer> {
    if (this.#closed) throw new HeadwaterError('SHUTTING_DOWN', 'The server is shutting down.');
    const open = this.#open.get(name);
    if (open) {
      open.usedAt = Date.now();
      return open.server;
    }
    if ((await this.get(name)) === undefined)
      throw new HeadwaterError('NOT_FOUND', `No preview named ${name}; see GET /api/v1/previews.`);
    if (!this.#options.writing())
      throw new HeadwaterError('STORE_UNAVAILABLE', 'Previews are served by the writer; retry shortly.', {
        retryAfterSeconds: 1,
      });
    // Checked again: another request may have opened it meanwhile.
    const again = this.#open.get(name);
    if (again) return again.server;
    const server = (async () => {
      const db = await openPreviewStore(this.#options.location, name);
      try {
        const opened = await this.#options.open(db);
        await opened.columnGraph.load(opened.db);
        return opened;
      } catch (error) {
        await db.close().catch(() => undefined);
        throw error;
      }
    })();
    this.#open.set(name, { server, usedAt: Date.now() });
    server.catch(() => {
      if (this.#open.get(name)?.server === server) this.#open.delete(name);
    });
    return server;
  }

  /** The preview's routes, to answer a `?preview=NAME` read. */
  async app(name: string): Promise<FastifyInstance> {
    return (await this.server(name)).app;
  }

  /** What an analysis of the preview reads. */
  async source(name: string): Promise<DiffSide> {
    const server = await this.server(name);
    return {
      db: server.db,
      state: server.readModel,
      graph: server.graph,
      columnGraph: server.columnGraph.analysisView,
      columns: server.columnGraph,
    };
  }

  targetOf(event: NormalizedEvent): string | undefined {
    if (this.#registry.length === 0) return undefined;
    return previewOfEvent(this.#registry, event.job);
  }

  async submit(target: string, events: readonly NormalizedEvent[]): Promise<EventOutcome[]> {
    try {
      const server = await this.server(target);
      return await server.frontDoor.submit(events.map((event) => ({ ok: true as const, event })));
    } catch (error) {
      const reason = `preview ${target} could not take the event: ${(error as Error).message}`;
      this.#options.log.warn({ err: error, preview: target }, reason);
      const retryAfterSeconds = error instanceof HeadwaterError ? (error.retryAfterSeconds ?? 1) : 1;
      return events.map(() => ({ status: 'unavailable', reason, retryAfterSeconds }));
    }
  }

  /** Closes every open preview. */
  async close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#timer);
    const open = [...this.#open.values()];
    this.#open.clear();
    await Promise.all(open.map(async ({ server }) => (await server.catch(() => undefined))?.close()));
  }
}

/** The configuration a preview's Headwater runs with: production's, without what only production does. */
export function previewConfig(config: ServerConfig): ServerConfig {
  return Object.freeze({
    ...config,
    port: 0,
    host: '127.0.0.1',
    advertiseUrl: undefined,
    kafka: undefined,
    forwardConfig: undefined,
    alertsConfig: undefined,
    retentionDays: undefined,
    // Reached only through production's routes, which have checked the caller (its credentials are not passed on).
    security: {
      ...config.security,
      insecure: false,
      anonymousRead: [],
      allowedHosts: [],
      corsOrigins: [],
      rateLimitPerKey: 0,
      rateLimitPerAddress: 0,
      oidc: undefined,
    },
  });
}
