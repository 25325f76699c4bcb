import {
  type Config,
  createSecretReader,
  type SecretRedactor,
  VaultSecretReader,
} from '@qontract/core';

/** One token Secret to publish in Vault. */
export interface TokenOutput {
  readonly cluster: string;
  readonly namespace: string;
  readonly name: string;
  /** The Secret's `data`: base64 values, as in the cluster. */
  readonly data: Readonly<Record<string, string>>;
}

/**
 * Where upstream publishes a copied token: once per consumer namespace and
 * once under `shared-resources/` (the later namespace wins there when two
 * namespaces use the same Secret name, as upstream).
 */
export function vaultOutputPaths(base: string, integration: string, out: TokenOutput): string[] {
  const root = `${base}/${integration}`;
  return [
    `${root}/${out.cluster}/${out.namespace}/${out.name}`,
    `${root}/shared-resources/${out.name}`,
  ];
}

/**
 * The Vault writer of `--vault-output-path`. Like upstream's `VaultClient()`,
 * it talks to the `[vault]` of config.toml whatever the app-interface
 * settings say about reading secrets.
 */
export function vaultWriterFor(options: {
  readonly config: Config;
  readonly redactor: SecretRedactor;
  readonly env: Readonly<Record<string, string | undefined>>;
}): VaultSecretReader {
  const reader = createSecretReader({ useVault: true, ...options });
  if (!(reader instanceof VaultSecretReader)) {
    throw new Error('--vault-output-path needs a Vault secret reader');
  }
  return reader;
}

/**
 * Writes each token to its Vault paths, base64-decoded as upstream's
 * `write()` does by default; unchanged KV v2 secrets are not written again.
 */
export async function writeTokensToVault(
  writer: Pick<VaultSecretReader, 'write'>,
  base: string,
  integration: string,
  outputs: readonly TokenOutput[],
): Promise<void> {
  for (const out of outputs) {
    for (const path of vaultOutputPaths(base, integration, out)) {
      await writer.write(path, { ...out.data }, { decodeBase64: true });
    }
  }
}
