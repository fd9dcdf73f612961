import type { FastifyInstance } from 'fastify';
import type { AppDeps } from './deps.js';
import { registerDatasetRoutes } from './datasets-routes.js';
import { registerEventRoutes } from './events-routes.js';
import { registerJobRoutes } from './jobs-routes.js';
import { registerNamespaceRoutes } from './namespaces-routes.js';
import { registerQualityRoutes } from './quality-routes.js';
import { registerRunRoutes } from './runs-routes.js';
import { registerSearchRoutes } from './search-routes.js';
import { sharedSchemas } from './schemas/shared.js';
import { registerSourceRoutes } from './sources-routes.js';
import { registerStatsRoutes } from './stats-routes.js';
import { registerTagRoutes } from './tags-routes.js';

/** Registers the read API route modules (the Marquez-compatible API) and the schemas they share. */
export function registerReadRoutes(app: FastifyInstance, deps: AppDeps): void {
  for (const schema of sharedSchemas) app.addSchema(schema);
  registerEventRoutes(app, deps);
  registerNamespaceRoutes(app, deps);
  registerSourceRoutes(app, deps);
  registerDatasetRoutes(app, deps);
  registerJobRoutes(app, deps);
  registerRunRoutes(app, deps);
  registerQualityRoutes(app, deps);
  registerTagRoutes(app, deps);
  registerSearchRoutes(app, deps);
  registerStatsRoutes(app, deps);
}
