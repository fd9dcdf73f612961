import type { FastifyInstance } from 'fastify';
import type { AppDeps } from './app.js';
import { registerEventRoutes } from './events-routes.js';
import { registerLineageRoutes } from './lineage-routes.js';
import { registerColumnLineageRoutes } from './column-lineage-routes.js';

/** Registers the read API route modules. */
export function registerReadRoutes(app: FastifyInstance, deps: AppDeps): void {
  registerEventRoutes(app, deps);
  registerLineageRoutes(app, deps);
  registerColumnLineageRoutes(app, deps);
}
