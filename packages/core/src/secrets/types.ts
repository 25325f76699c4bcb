import { QontractError } from '../errors.ts';

/** A secret reference as app-interface writes it (`VaultSecret_v1`). */
export interface SecretRef {
  readonly path: string;
  readonly field: string;
  readonly version?: number | null | undefined;
  /** `base64` decodes a single-field read; `plain` or none returns the raw value. */
  readonly format?: string | null | undefined;
}

/** A reference to a whole secret (all its fields). */
export interface SecretPathRef {
  readonly path: string;
  readonly version?: number | null | undefined;
}

export interface SecretReader {
  /** One field of a secret, as a string. */
  read(ref: SecretRef): Promise<string>;
  /** All fields of a secret. */
  readAll(ref: SecretPathRef): Promise<Record<string, string>>;
}

/** A writable store (Vault) for integrations that write secrets back. */
export interface SecretWriter {
  write(path: string, data: Record<string, string>, options?: { force?: boolean }): Promise<void>;
}

/** The secret, its field or its version does not exist. The message names the path. */
export class SecretNotFoundError extends QontractError {}

/** Vault refused access (403). */
export class SecretAccessForbiddenError extends QontractError {}

/** The secret exists but has no such field (upstream `SecretFieldNotFoundError`). */
export class SecretFieldNotFoundError extends SecretNotFoundError {}

/** An explicit KV v2 version of the secret does not exist (upstream `SecretVersionNotFoundError`). */
export class SecretVersionNotFoundError extends SecretNotFoundError {}

/** Vault could not be reached, or answered in a way no retry could fix. */
export class VaultConnectionError extends QontractError {}

/** Vault refused a login (bad AppRole credentials, unknown Kubernetes role, unreadable JWT). */
export class VaultAuthenticationError extends QontractError {}
