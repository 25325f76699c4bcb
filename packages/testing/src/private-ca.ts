import selfsigned from 'selfsigned';

/** A certificate authority made for one test, and a server certificate it signed for 127.0.0.1. */
export interface PrivateCa {
  /** The CA's certificate (PEM): what a client must trust. */
  readonly caCert: string;
  /** The key and certificate (PEM) a TLS fake serves, for 127.0.0.1 and localhost. */
  readonly server: { readonly key: string; readonly cert: string };
}

/**
 * A private CA, as an organisation's internal one: no client trusts it unless
 * told to, unlike the self-signed certificate the fakes serve by default.
 */
export async function makePrivateCa(name = 'qontract test internal CA'): Promise<PrivateCa> {
  const tenYears = new Date(Date.now() + 10 * 365 * 24 * 3600 * 1000);
  const ca = await selfsigned.generate([{ name: 'commonName', value: name }], {
    keyType: 'ec',
    curve: 'P-256',
    algorithm: 'sha256',
    notAfterDate: tenYears,
    extensions: [
      { name: 'basicConstraints', cA: true, critical: true },
      { name: 'keyUsage', keyCertSign: true, digitalSignature: true, critical: true },
    ],
  });
  const server = await selfsigned.generate([{ name: 'commonName', value: '127.0.0.1' }], {
    keyType: 'ec',
    curve: 'P-256',
    algorithm: 'sha256',
    notAfterDate: tenYears,
    ca: { key: ca.private, cert: ca.cert },
    extensions: [
      { name: 'basicConstraints', cA: false },
      { name: 'extKeyUsage', serverAuth: true },
      {
        name: 'subjectAltName',
        altNames: [
          { type: 7, ip: '127.0.0.1' },
          { type: 2, value: 'localhost' },
        ],
      },
    ],
  });
  return { caCert: ca.cert, server: { key: server.private, cert: server.cert } };
}
