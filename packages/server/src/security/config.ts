import { commaList as list, type ConfigFlags, type ConfigReader } from '../core/config-reader.js';
import { HeadwaterError } from '../core/errors.js';
import { isRole, parsePatterns, ROLES, type Role } from './access.js';

/** One OIDC grant rule: tokens whose `claim` is (or contains) `value` get `role` over `namespaces`. */
export interface OidcGrantRule {
  /** The claim to look at; '*' matches every valid token. */
  readonly claim: string;
  readonly value: string;
  readonly role: Role;
  readonly namespaces: readonly string[];
}

/** Where OIDC tokens come from and how their claims become grants. */
export interface OidcConfig {
  /** The issuer (`iss`) tokens must name; its JWKS is found through its discovery document unless given. */
  readonly issuer: string;
  /** The audience (`aud`) tokens must name. */
  readonly audience: string;
  /** The issuer's key set; @default the discovery document's `jwks_uri` */
  readonly jwksUrl: string | undefined;
  /** Leeway for `exp` and `nbf`. @default 60 */
  readonly clockToleranceSeconds: number;
  /** Signature algorithms accepted. @default ['RS256', 'ES256', 'PS256', 'EdDSA'] */
  readonly algorithms: readonly string[];
  /**
   * How long a fetched key set is used before it is fetched again (before the next token is checked): a key the
   * issuer removed is refused at most this long after. A key id not in the set fetches it again at once, at most
   * once per 5 s (or per this age, if shorter). @default 600
   */
  readonly jwksMaxAgeSeconds: number;
  readonly grants: readonly OidcGrantRule[];
  /**
   * The explorer's client id at the issuer (a public client: authorisation code with PKCE, no secret); without it
   * the explorer offers no OIDC sign-in. @default none
   */
  readonly clientId: string | undefined;
  /** The scopes the explorer asks for; add `offline_access` where the issuer needs it for a refresh token. @default 'openid profile' */
  readonly scopes: string;
}

/** Authentication, authorisation, request checks and rate limits. */
export interface SecurityConfig {
  /** Serve a non-loopback address without credentials configured (warned about at every start). @default false */
  readonly insecure: boolean;
  /** Namespaces anyone may read without credentials once auth is on; @default none */
  readonly anonymousRead: readonly string[];
  /** Host header values accepted besides loopback names and the bound address (DNS-rebinding defence). */
  readonly allowedHosts: readonly string[];
  /** Origins allowed to call the API from a browser (CORS); @default none: CORS is off */
  readonly corsOrigins: readonly string[];
  /** Requests per window (rate-limit-window) per key (or OIDC subject); 0 is no limit. @default 0 */
  readonly rateLimitPerKey: number;
  /** Requests per window per client address without a valid credential, once auth is on; 0 is no limit. @default 300 */
  readonly rateLimitPerAddress: number;
  /** The window both rate limits count over, in seconds. @default 60 */
  readonly rateLimitWindowSeconds: number;
  readonly oidc: OidcConfig | undefined;
}

/** The `headwater serve` flags of this module, for the CLI's parser. */
export const securityFlags = {
  insecure: { type: 'boolean' },
  'anonymous-read': { type: 'string' },
  'allowed-hosts': { type: 'string' },
  'cors-origins': { type: 'string' },
  'rate-limit-per-key': { type: 'string' },
  'rate-limit-per-address': { type: 'string' },
  'rate-limit-window': { type: 'string' },
  'oidc-issuer': { type: 'string' },
  'oidc-audience': { type: 'string' },
  'oidc-jwks-url': { type: 'string' },
  'oidc-clock-tolerance': { type: 'string' },
  'oidc-algorithms': { type: 'string' },
  'oidc-grants': { type: 'string' },
  'oidc-client-id': { type: 'string' },
  'oidc-scopes': { type: 'string' },
  'oidc-jwks-max-age': { type: 'string' },
} as const;

/** Resolves the security settings (flags, then HEADWATER_* variables, then defaults). */
export function resolveSecurityConfig(flags: ConfigFlags, { pick, integer }: ConfigReader): SecurityConfig {
  const insecureText = flags.insecure === true ? 'true' : pick('insecure', 'HEADWATER_INSECURE').value;
  if (insecureText !== undefined && !['true', 'false', '1', '0'].includes(insecureText))
    throw new HeadwaterError(
      'INVALID_CONFIG',
      `HEADWATER_INSECURE must be true or false; got ${insecureText}.`,
    );
  const anonymous = pick('anonymous-read', 'HEADWATER_ANONYMOUS_READ');
  const issuer = pick('oidc-issuer', 'HEADWATER_OIDC_ISSUER').value;
  let oidc: OidcConfig | undefined;
  if (issuer !== undefined) {
    const audience = pick('oidc-audience', 'HEADWATER_OIDC_AUDIENCE').value;
    if (!audience)
      throw new HeadwaterError(
        'INVALID_CONFIG',
        '--oidc-issuer needs --oidc-audience (the audience tokens are issued for).',
      );
    const grants = pick('oidc-grants', 'HEADWATER_OIDC_GRANTS');
    const algorithms = list(pick('oidc-algorithms', 'HEADWATER_OIDC_ALGORITHMS').value);
    oidc = Object.freeze({
      issuer,
      audience,
      jwksUrl: pick('oidc-jwks-url', 'HEADWATER_OIDC_JWKS_URL').value,
      clockToleranceSeconds: integer('oidc-clock-tolerance', 'HEADWATER_OIDC_CLOCK_TOLERANCE', 60, 0, 3600),
      jwksMaxAgeSeconds: integer('oidc-jwks-max-age', 'HEADWATER_OIDC_JWKS_MAX_AGE', 600, 1, 86_400),
      algorithms: algorithms.length > 0 ? algorithms : ['RS256', 'ES256', 'PS256', 'EdDSA'],
      grants: parseGrantRules(grants.value ?? '', grants.source),
      clientId: pick('oidc-client-id', 'HEADWATER_OIDC_CLIENT_ID').value || undefined,
      scopes: pick('oidc-scopes', 'HEADWATER_OIDC_SCOPES').value?.trim() || 'openid profile',
    });
  }
  return Object.freeze({
    insecure: insecureText === 'true' || insecureText === '1',
    anonymousRead: anonymous.value === undefined ? [] : parsePatterns(anonymous.value, anonymous.source),
    allowedHosts: list(pick('allowed-hosts', 'HEADWATER_ALLOWED_HOSTS').value).map((host) =>
      host.toLowerCase(),
    ),
    corsOrigins: list(pick('cors-origins', 'HEADWATER_CORS_ORIGINS').value),
    rateLimitPerKey: integer('rate-limit-per-key', 'HEADWATER_RATE_LIMIT_PER_KEY', 0, 0, 100_000_000),
    rateLimitPerAddress: integer(
      'rate-limit-per-address',
      'HEADWATER_RATE_LIMIT_PER_ADDRESS',
      300,
      0,
      100_000_000,
    ),
    rateLimitWindowSeconds: integer('rate-limit-window', 'HEADWATER_RATE_LIMIT_WINDOW', 60, 1, 86_400),
    oidc,
  });
}

/**
 * Parses `CLAIM=VALUE:ROLE:PATTERNS` rules separated by `;`, e.g.
 * `groups=data-eng:writer:analytics*,raw*;groups=platform:admin:*` (or `*:reader:public*` for any valid token).
 */
export function parseGrantRules(text: string, where: string): OidcGrantRule[] {
  const rules: OidcGrantRule[] = [];
  for (const part of text
    .split(';')
    .map((p) => p.trim())
    .filter((p) => p.length > 0)) {
    const match = /^(\*|([^=:]+)=([^:]*)):([a-z]+):(.+)$/.exec(part);
    if (!match || !isRole(match[4]!)) {
      throw new HeadwaterError(
        'INVALID_CONFIG',
        `${where}: ${JSON.stringify(part)} is not CLAIM=VALUE:ROLE:PATTERNS (ROLE one of ${ROLES.join(', ')}), ` +
          "e.g. 'groups=data-eng:writer:analytics*' or '*:reader:*'.",
      );
    }
    rules.push({
      claim: match[1] === '*' ? '*' : match[2]!,
      value: match[3] ?? '',
      role: match[4],
      namespaces: parsePatterns(match[5]!, where),
    });
  }
  return rules;
}
