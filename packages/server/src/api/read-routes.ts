import fastifyPlugin from 'fastify-plugin';
import { datasetRoutes, type DatasetRouteDeps } from './datasets-routes.js';
import { eventRoutes, type EventRouteDeps } from './events-routes.js';
import { jobRoutes, type JobRouteDeps } from './jobs-routes.js';
import { namespaceRoutes, type NamespaceRouteDeps } from './namespaces-routes.js';
import { qualityRoutes, type QualityRouteDeps } from './quality-routes.js';
import { runRoutes, type RunRouteDeps } from './runs-routes.js';
import { searchRoutes, type SearchRouteDeps } from './search-routes.js';
import { sharedSchemas } from './schemas/shared.js';
import { sourceRoutes, type SourceRouteDeps } from './sources-routes.js';
import { statsRoutes, type StatsRouteDeps } from './stats-routes.js';
import { tagRoutes, type TagRouteDeps } from './tags-routes.js';

/** What the read API's route modules need, together. */
export type ReadRouteDeps = EventRouteDeps &
  NamespaceRouteDeps &
  SourceRouteDeps &
  DatasetRouteDeps &
  JobRouteDeps &
  RunRouteDeps &
  QualityRouteDeps &
  TagRouteDeps &
  SearchRouteDeps &
  StatsRouteDeps;

/**
 * The read API's route modules (the Marquez-compatible API) and the schemas they share. Like every route module it
 * is not encapsulated (fastify-plugin), so the shared schemas are the root's, and every later module can refer to
 * them too.
 */
export const readRoutes = fastifyPlugin<ReadRouteDeps>(
  async (app, deps) => {
    for (const schema of sharedSchemas) app.addSchema(schema);
    await app.register(eventRoutes, deps);
    await app.register(namespaceRoutes, deps);
    await app.register(sourceRoutes, deps);
    await app.register(datasetRoutes, deps);
    await app.register(jobRoutes, deps);
    await app.register(runRoutes, deps);
    await app.register(qualityRoutes, deps);
    await app.register(tagRoutes, deps);
    await app.register(searchRoutes, deps);
    await app.register(statsRoutes, deps);
  },
  { name: 'read-routes' },
);
