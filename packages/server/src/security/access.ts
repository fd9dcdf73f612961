import { HeadwaterError } from '../core/errors.js';

/** What a caller may do, from least to most. Each role includes the ones before it. */
export const ROLES = ['reader', 'writer', 'admin'] as const;

/** reader: read; writer: read and ingest; admin: also deletes, tags, owners (and, over `*`, keys and audit). */
export type Role = (typeof ROLES)[number];

/** What a route needs: nothing, to read, to ingest, or to administer. */
export type RouteAccess = 'public' | 'read' | 'write' | 'admin';

/** Whether `value` is a role name. */
export function isRole(value: string): value is Role {
  return (ROLES as readonly string[]).includes(value);
}

/**
 * Namespace patterns as given in configuration: comma-separated, `*` matching any run of characters (so `*` is
 * every namespace, `analytics*` every namespace starting with `analytics`). Throws on an empty pattern.
 */
export function parsePatterns(text: string, where: string): string[] {
  const patterns = text
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part.length > 0);
  if (patterns.length === 0) {
    throw new HeadwaterError(
      'INVALID_CONFIG',
      `${where} needs at least one namespace pattern, such as 'analytics*' or '*' for every namespace.`,
    );
  }
  return patterns;
}

/** A predicate matching namespace names against glob patterns, memoised per name. */
export function namespaceMatcher(patterns: readonly string[]): (namespace: string) => boolean {
  if (patterns.includes('*')) return () => true;
  const regex = new RegExp(
    `^(?:${patterns.map((p) => p.split('*').map(escapeRegex).join('.*')).join('|')})$`,
    's',
  );
  const memo = new Map<string, boolean>();
  return (namespace) => {
    let answer = memo.get(namespace);
    if (answer === undefined) {
      answer = regex.test(namespace);
      if (memo.size > 10_000) memo.clear();
      memo.set(namespace, answer);
    }
    return answer;
  };
}

const escapeRegex = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** One grant: a role over the namespaces matching some patterns. */
export interface Grant {
  readonly role: Role;
  readonly namespaces: readonly string[];
}

/**
 * Who is calling and what they may do: the one visibility predicate every route and the response filter use.
 * A caller may hold several grants (an OIDC token can map to a reader grant on one set of namespaces and a
 * writer grant on another).
 */
export class Principal {
  /** 'anonymous', 'key:<id>' or 'oidc:<subject>'; what the audit log records. */
  readonly subject: string;
  /** A display name (the key's name, the token's subject). */
  readonly name: string;
  readonly grants: readonly Grant[];
  readonly #read: (namespace: string) => boolean;
  readonly #write: (namespace: string) => boolean;
  readonly #admin: (namespace: string) => boolean;
  /** Reads every namespace: no answer needs filtering. */
  readonly readsAll: boolean;
  /** Writes every namespace: no event needs checking. */
  readonly writesAll: boolean;
  /** Administers every namespace: may manage keys and read the audit log. */
  readonly adminsAll: boolean;
  /** Has any grant at all. */
  readonly authenticated: boolean;

  constructor(subject: string, name: string, grants: readonly Grant[], authenticated = true) {
    this.subject = subject;
    this.name = name;
    this.grants = grants;
    this.authenticated = authenticated;
    const over = (minimum: Role) => {
      const patterns = grants
        .filter((grant) => ROLES.indexOf(grant.role) >= ROLES.indexOf(minimum))
        .flatMap((grant) => grant.namespaces);
      return {
        matcher: patterns.length === 0 ? () => false : namespaceMatcher(patterns),
        all: patterns.includes('*'),
      };
    };
    const read = over('reader');
    const write = over('writer');
    const admin = over('admin');
    this.#read = read.matcher;
    this.#write = write.matcher;
    this.#admin = admin.matcher;
    this.readsAll = read.all;
    this.writesAll = write.all;
    this.adminsAll = admin.all;
  }

  /** Whether the caller may see anything of `namespace`. */
  canRead(namespace: string): boolean {
    return this.readsAll || this.#read(namespace);
  }

  /** Whether the caller may send events naming `namespace`. */
  canWrite(namespace: string): boolean {
    return this.writesAll || this.#write(namespace);
  }

  /** Whether the caller may delete, tag or change owners in `namespace`. */
  canAdmin(namespace: string): boolean {
    return this.adminsAll || this.#admin(namespace);
  }

  /** Whether the caller holds `role` over at least one namespace (what a route needs before any namespace). */
  hasRole(role: Role): boolean {
    return this.grants.some((grant) => ROLES.indexOf(grant.role) >= ROLES.indexOf(role));
  }
}

/** Local use: no credentials exist, so whoever reaches the (loopback) server may do anything. */
export const LOCAL_PRINCIPAL = new Principal('anonymous', 'anonymous (no auth configured)', [
  { role: 'admin', namespaces: ['*'] },
]);

/** Nobody: what an unauthenticated request holds once credentials exist, unless anonymous read is configured. */
export const NOBODY = new Principal('anonymous', 'anonymous', [], false);

/**
 * The namespaces an event names anywhere (job, parent job, inputs, outputs, a DatasetEvent's dataset, symlinks,
 * column-lineage inputs): every value of a `namespace` key in it. Writing the event needs write access to each,
 * because each gets rows (a dataset, a sighting, facets) from it.
 */
export function namespacesOf(value: unknown, into = new Set<string>(), depth = 0): Set<string> {
  if (depth > 64 || typeof value !== 'object' || value === null) return into;
  if (Array.isArray(value)) {
    for (const item of value) namespacesOf(item, into, depth + 1);
    return into;
  }
  for (const [key, item] of Object.entries(value)) {
    if (key === 'namespace' && typeof item === 'string') into.add(item);
    else if (typeof item === 'object') namespacesOf(item, into, depth + 1);
  }
  return into;
}

/** The namespaces of `event` the caller may not write, or an empty list. */
export function unwritableNamespaces(principal: Principal, event: unknown): string[] {
  if (principal.writesAll) return [];
  return [...namespacesOf(event)].filter((namespace) => !principal.canWrite(namespace));
}
