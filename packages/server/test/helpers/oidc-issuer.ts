import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK, type JWTPayload } from 'jose';

/** A signing key of the test issuer. */
export interface IssuerKey {
  readonly kid: string;
  readonly alg: string;
  readonly privateKey: CryptoKey;
  readonly publicJwk: JWK;
}

/**
 * An OIDC issuer for tests, over real HTTP on loopback: a discovery document at
 * `/.well-known/openid-configuration` and a JWKS at `/jwks` that keys can be added to and removed from while it
 * runs (a rotation), and tokens signed with any of its keys (or with keys it does not publish).
 */
export interface TestIssuer {
  /** The issuer URL (`iss`), also where its discovery document is. */
  readonly url: string;
  /** How many times the JWKS has been fetched. */
  readonly jwksFetches: number;
  /** Makes a key (RS256 unless said); published in the JWKS unless `publish` is false. */
  newKey(options?: { alg?: string; kid?: string; publish?: boolean }): Promise<IssuerKey>;
  /** Stops publishing a key (tokens signed with it remain signed). */
  unpublish(kid: string): void;
  /**
   * A token signed with `key`: `iss` this issuer, `aud` `audience`, `iat` now, `exp` in 5 minutes unless
   * `claims` says otherwise (a claim set to undefined is left out).
   */
  sign(key: IssuerKey, claims: Readonly<Record<string, unknown>>, audience?: string): Promise<string>;
  close(): Promise<void>;
}

/** Starts a {@link TestIssuer} on a free loopback port. */
export async function startTestIssuer(): Promise<TestIssuer> {
  const published = new Map<string, JWK>();
  let jwksFetches = 0;
  let url = '';
  const server: Server = createServer((request, response) => {
    const send = (status: number, body: unknown) => {
      response.writeHead(status, { 'content-type': 'application/json' });
      response.end(JSON.stringify(body));
    };
    if (request.url === '/.well-known/openid-configuration')
      return send(200, {
        issuer: url,
        jwks_uri: `${url}/jwks`,
        id_token_signing_alg_values_supported: ['RS256'],
      });
    if (request.url === '/jwks') {
      jwksFetches++;
      return send(200, { keys: [...published.values()] });
    }
    send(404, { error: 'not found' });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  let counter = 0;

  return {
    url,
    get jwksFetches() {
      return jwksFetches;
    },
    async newKey({ alg = 'RS256', kid = `key-${++counter}`, publish = true } = {}) {
      const { publicKey, privateKey } = await generateKeyPair(alg, { extractable: true });
      const publicJwk = { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' };
      if (publish) published.set(kid, publicJwk);
      return { kid, alg, privateKey, publicJwk };
    },
    unpublish(kid) {
      published.delete(kid);
    },
    async sign(key, claims, audience = 'headwater-test') {
      const now = Math.floor(Date.now() / 1000);
      const payload: JWTPayload = { iss: url, aud: audience, iat: now, exp: now + 300, ...claims };
      for (const name of Object.keys(payload)) if (payload[name] === undefined) delete payload[name];
      return new SignJWT(payload)
        .setProtectedHeader({ alg: key.alg, kid: key.kid, typ: 'JWT' })
        .sign(key.privateKey);
    },
    close: () =>
      new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve()))),
  };
}
