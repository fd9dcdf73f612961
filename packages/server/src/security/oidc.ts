import { createRemoteJWKSet, errors, jwtVerify, type JWTPayload } from 'jose';
import { HeadwaterError } from '../core/errors.js';
import { Principal, type Grant } from './access.js';
import type { OidcConfig } from './config.js';

/** Why a token was refused (the auth-failure metric's reason and the audit detail). */
export type TokenRefusal =
  | 'token_expired'
  | 'token_not_yet_valid'
  | 'token_wrong_audience'
  | 'token_wrong_issuer'
  | 'token_unknown_key'
  | 'token_wrong_algorithm'
  | 'token_invalid'
  | 'token_no_grant'
  | 'issuer_unreachable';

/**
 * Validates JWTs from one OIDC issuer: signature against the issuer's JWKS (fetched on first use and again when
 * a token names a key id not seen yet, which is how a rotation is picked up; jose rate-limits those refetches),
 * `iss`, `aud`, `exp` and `nbf` with a clock tolerance, and the algorithm against an allow-list. Claims become
 * grants through the configured rules.
 */
export class OidcVerifier {
  readonly #config: OidcConfig;
  #jwks: ReturnType<typeof createRemoteJWKSet> | undefined;

  constructor(config: OidcConfig) {
    this.#config = config;
  }

  /** Checks `token`: the principal its claims grant, or why it was refused. */
  async verify(
    token: string,
  ): Promise<{ principal: Principal } | { refused: TokenRefusal; message: string }> {
    let payload: JWTPayload;
    try {
      const jwks = await this.#keySet();
      ({ payload } = await jwtVerify(token, jwks, {
        issuer: this.#config.issuer,
        audience: this.#config.audience,
        clockTolerance: this.#config.clockToleranceSeconds,
        algorithms: [...this.#config.algorithms],
        // A token without an expiry would be good forever once issued.
        requiredClaims: ['exp'],
      }));
    } catch (error) {
      return { refused: refusalOf(error), message: error instanceof Error ? error.message : String(error) };
    }
    const grants = this.#grantsOf(payload);
    if (grants.length === 0)
      return {
        refused: 'token_no_grant',
        message: 'the token is valid but no --oidc-grants rule matches its claims',
      };
    const subject = typeof payload.sub === 'string' ? payload.sub : 'unknown';
    return { principal: new Principal(`oidc:${subject}`, subject, grants) };
  }

  #grantsOf(payload: JWTPayload): Grant[] {
    const grants: Grant[] = [];
    for (const rule of this.#config.grants) {
      const claim = rule.claim === '*' ? undefined : payload[rule.claim];
      const matches =
        rule.claim === '*' ||
        claim === rule.value ||
        (Array.isArray(claim) && claim.includes(rule.value)) ||
        // Space-separated claims (OAuth `scope`).
        (typeof claim === 'string' && claim.split(' ').includes(rule.value));
      if (matches) grants.push({ role: rule.role, namespaces: rule.namespaces });
    }
    return grants;
  }

  async #keySet(): Promise<ReturnType<typeof createRemoteJWKSet>> {
    if (this.#jwks) return this.#jwks;
    let url = this.#config.jwksUrl;
    if (url === undefined) {
      const discovery = `${this.#config.issuer.replace(/\/$/, '')}/.well-known/openid-configuration`;
      const response = await fetch(discovery, { signal: AbortSignal.timeout(5_000) }).catch(
        (error: unknown) => {
          throw new HeadwaterError(
            'STORE_UNAVAILABLE',
            `The OIDC issuer's discovery document ${discovery} is unreachable.`,
            {
              cause: error,
            },
          );
        },
      );
      const document = (await response.json().catch(() => ({}))) as { jwks_uri?: unknown };
      if (!response.ok || typeof document.jwks_uri !== 'string') {
        throw new HeadwaterError(
          'STORE_UNAVAILABLE',
          `${discovery} answered ${response.status} without a jwks_uri.`,
        );
      }
      url = document.jwks_uri;
    }
    const maxAgeMs = this.#config.jwksMaxAgeSeconds * 1000;
    this.#jwks = createRemoteJWKSet(new URL(url), {
      cacheMaxAge: maxAgeMs,
      // Unknown key ids refetch at most this often, so tokens with made-up ids cannot make it hammer the issuer.
      cooldownDuration: Math.min(5_000, maxAgeMs),
      timeoutDuration: 5_000,
    });
    return this.#jwks;
  }
}

function refusalOf(error: unknown): TokenRefusal {
  if (error instanceof errors.JWTExpired) return 'token_expired';
  if (error instanceof errors.JWTClaimValidationFailed) {
    if (error.claim === 'nbf') return 'token_not_yet_valid';
    if (error.claim === 'aud') return 'token_wrong_audience';
    if (error.claim === 'iss') return 'token_wrong_issuer';
    return 'token_invalid';
  }
  if (error instanceof errors.JWKSNoMatchingKey) return 'token_unknown_key';
  if (error instanceof errors.JOSEAlgNotAllowed) return 'token_wrong_algorithm';
  if (error instanceof errors.JWKSTimeout || error instanceof HeadwaterError) return 'issuer_unreachable';
  return 'token_invalid';
}
