import { describe, expect, it } from 'vitest';
import { configFromObject } from '../config.ts';
import { SecretRedactor } from '../redaction.ts';
import { ConfigSecretReader } from './config-reader.ts';
import { SecretNotFoundError } from './types.ts';

const config = configFromObject({
  graphql: { server: 'file://x' },
  github: { 'app-sre': { token: 'ghp_config_token' } },
  smtp: { creds: { user: 'mailer', port: 25 } },
});

describe('ConfigSecretReader', () => {
  it('walks config.toml by the path segments and ignores format and version', async () => {
    const redactor = new SecretRedactor();
    const reader = new ConfigSecretReader(config, redactor);
    await expect(
      reader.read({ path: 'github/app-sre', field: 'token', format: 'base64', version: 3 }),
    ).resolves.toBe('ghp_config_token');
    await expect(reader.readAll({ path: 'smtp/creds' })).resolves.toEqual({
      user: 'mailer',
      port: '25',
    });
    expect(redactor.redact('ghp_config_token')).toBe('***');
  });

  it('names the path in not-found errors', async () => {
    const reader = new ConfigSecretReader(config);
    await expect(reader.read({ path: 'github/app-sre', field: 'nope' })).rejects.toThrow(
      new SecretNotFoundError(
        "key not found in config file github/app-sre: field 'nope' is missing",
      ),
    );
    await expect(reader.readAll({ path: 'github/other' })).rejects.toThrow(
      "secret github/other not found in config file: no key 'other'",
    );
  });
});
