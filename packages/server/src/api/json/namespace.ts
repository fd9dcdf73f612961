/** Marquez's Namespace and Source, built from the store's records. */
import type { NamespaceRecord } from '../../store/queries/namespaces.js';
import type { SourceRecord } from '../../store/queries/sources.js';
import type { NamespaceJson, SourceJson } from '../schemas/namespace.js';
import { iso } from './values.js';

/** Builds a Namespace. */
export function namespaceJson(record: NamespaceRecord): NamespaceJson {
  return {
    name: record.name,
    createdAt: iso(record.createdAt),
    updatedAt: iso(record.updatedAt),
    ownerName: record.ownerName,
    description: record.description,
    isHidden: record.isHidden,
  };
}

/** Builds a Source. */
export function sourceJson(record: SourceRecord): SourceJson {
  return {
    type: record.type,
    name: record.name,
    createdAt: iso(record.createdAt),
    updatedAt: iso(record.updatedAt),
    connectionUrl: record.connectionUrl,
    description: record.description,
  };
}
