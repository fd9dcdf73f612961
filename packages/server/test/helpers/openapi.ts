import { Ajv, type ValidateFunction } from 'ajv';
import ajvFormats from 'ajv-formats';
import type { Send } from './api.js';

/** A route of the server's OpenAPI document, with a response validator per documented status. */
export interface DocumentedRoute {
  readonly method: string;
  readonly template: string;
  readonly pattern: RegExp;
  readonly validators: ReadonlyMap<number, ValidateFunction>;
}

/** The routes of the OpenAPI document the server publishes, with their response schemas compiled. */
export async function documentedRoutes(request: Send): Promise<DocumentedRoute[]> {
  const doc = (await (await request('/api/v1/openapi.json')).json()) as {
    paths: Record<string, Record<string, { responses?: Record<string, unknown> }>>;
  };
  const ajv = new Ajv({ strict: false, allErrors: true, validateSchema: false });
  ajvFormats.default(ajv);
  ajv.addSchema(doc, 'openapi');
  const pointer = (...parts: string[]) =>
    parts.map((part) => part.replaceAll('~', '~0').replaceAll('/', '~1')).join('/');
  return Object.entries(doc.paths).flatMap(([template, operations]) =>
    Object.entries(operations).map(([method, operation]) => ({
      method: method.toUpperCase(),
      template,
      pattern: new RegExp(`^${template.replace(/[.]/g, '\\.').replace(/\{[^}]+\}/g, '[^/]+')}$`),
      validators: new Map(
        Object.keys(operation.responses ?? {}).map((status) => [
          Number(status),
          ajv.getSchema(
            `openapi#/${pointer('paths', template, method, 'responses', status, 'content', 'application/json', 'schema')}`,
          )!,
        ]),
      ),
    })),
  );
}

/**
 * Throws unless `body` matches the schema the document gives for the route of `method path` and `status`: the
 * documentation must describe every field, null and omission the server really sends.
 */
export function checkResponse(
  routes: readonly DocumentedRoute[],
  method: string,
  path: string,
  status: number,
  body: unknown,
): void {
  const pathOnly = `/api/v1${path}`.split('?')[0]!;
  const route = routes.find((entry) => entry.method === method && entry.pattern.test(pathOnly));
  const validate = route?.validators.get(status);
  if (validate && !validate(body)) {
    throw new Error(
      `${method} ${path} -> ${status} does not match the OpenAPI schema of ${route!.template}: ${JSON.stringify(validate.errors)}`,
    );
  }
}
