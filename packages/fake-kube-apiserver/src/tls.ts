import selfsigned from 'selfsigned';

export interface ServingCertificate {
  readonly key: string;
  readonly cert: string;
}

let shared: Promise<ServingCertificate> | undefined;

/**
 * A self-signed certificate for 127.0.0.1, made once per process. TLS is not
 * optional: client-go (kubectl) only sends a bearer token over https.
 */
export function servingCertificate(): Promise<ServingCertificate> {
  shared ??= selfsigned
    .generate([{ name: 'commonName', value: 'fake-kube-apiserver' }], {
      keyType: 'ec',
      curve: 'P-256',
      algorithm: 'sha256',
      notAfterDate: new Date(Date.now() + 365 * 24 * 3600 * 1000),
      extensions: [
        { name: 'basicConstraints', cA: true, critical: true },
        { name: 'keyUsage', digitalSignature: true, keyCertSign: true, critical: true },
        { name: 'extKeyUsage', serverAuth: true },
        {
          name: 'subjectAltName',
          altNames: [
            { type: 7, ip: '127.0.0.1' },
            { type: 2, value: 'localhost' },
          ],
        },
      ],
    })
    .then((r) => ({ key: r.private, cert: r.cert }));
  return shared;
}
