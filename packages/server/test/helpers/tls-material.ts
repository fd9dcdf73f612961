import { execFile } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** Files of a throwaway certificate authority and a loopback server certificate it signed. */
export interface TlsMaterial {
  /** The CA's certificate (PEM): what a client trusts. */
  readonly caFile: string;
  /** The server's unencrypted PKCS#8 key, then its certificate and the CA's: a PEM keystore for Kafka. */
  readonly keystoreFile: string;
  /** A second CA's certificate, which did not sign the server's: a client trusting it must refuse the server. */
  readonly otherCaFile: string;
}

/**
 * Makes a CA and a certificate for 127.0.0.1 and localhost signed by it, with openssl, in `dir`. Valid for one day:
 * made at test time, never checked in.
 */
export async function makeTlsMaterial(dir: string): Promise<TlsMaterial> {
  const at = (name: string) => path.join(dir, name);
  const openssl = (...args: string[]) => run('openssl', args, { cwd: dir });
  const newCa = (name: string) =>
    openssl(
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      `${name}.key`,
      '-out',
      `${name}.pem`,
      '-days',
      '1',
      '-subj',
      `/CN=${name}`,
    );
  await newCa('headwater-test-ca');
  await newCa('headwater-other-ca');
  await openssl(
    'req',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    'server.key',
    '-out',
    'server.csr',
    '-subj',
    '/CN=127.0.0.1',
  );
  await writeFile(at('server.ext'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\n');
  await openssl(
    'x509',
    '-req',
    '-in',
    'server.csr',
    '-CA',
    'headwater-test-ca.pem',
    '-CAkey',
    'headwater-test-ca.key',
    '-CAcreateserial',
    '-out',
    'server.pem',
    '-days',
    '1',
    '-extfile',
    'server.ext',
  );
  const parts = await Promise.all(
    ['server.key', 'server.pem', 'headwater-test-ca.pem'].map((name) => readFile(at(name), 'utf8')),
  );
  await writeFile(at('keystore.pem'), parts.join(''));
  return {
    caFile: at('headwater-test-ca.pem'),
    keystoreFile: at('keystore.pem'),
    otherCaFile: at('headwater-other-ca.pem'),
  };
}
