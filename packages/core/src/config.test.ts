import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig, parseConfig } from './config.ts';
import { ConfigError } from './errors.ts';

describe('config.toml', () => {
  it('reads the original sections and keeps unknown tables opaque', () => {
    const config = parseConfig(
      `
[graphql]
server = "https://qontract-server.example/graphql"
token = "Basic abc"

[vault]
server = "https://vault.example"
role_id = "r"
secret_id = "s"

[github.app-sre]
token = "gh"

[jenkins.ci-int]
url = "https://ci"

[app-sre.creds.kube-configs.c1]
server = "https://api.c1:6443"
token = "t1"
`,
      '/etc/qr/config.toml',
    );
    expect(config.graphql).toEqual({
      server: 'https://qontract-server.example/graphql',
      token: 'Basic abc',
    });
    expect(config.vault?.role_id).toBe('r');
    expect(config.github?.['app-sre']?.token).toBe('gh');
    expect(config.sourcePath).toBe('/etc/qr/config.toml');
    expect(config.raw.jenkins).toEqual({ 'ci-int': { url: 'https://ci' } });
    expect((config as Record<string, unknown>)['app-sre']).toBeDefined();
  });

  it('lists every problem with the key and the expected type', () => {
    const text = `
[graphql]
server = 42

[vault]
role_id = true

[github.org]
token = 1.5

[state]
provider = "gcs"
`;
    let error: unknown;
    try {
      parseConfig(text, 'config.toml');
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const problems = (error as ConfigError).problems;
    expect(problems).toEqual(
      expect.arrayContaining([
        'graphql.server: expected string, found integer',
        'vault.server: expected string, found nothing (the key is missing)',
        'vault.role_id: expected string, found boolean',
        'github.org.token: expected string, found float',
        'state.provider: expected one of "s3", "local"',
      ]),
    );
    expect(problems).toHaveLength(5);
    expect((error as ConfigError).message).toMatch(/^config.toml: invalid configuration\n {2}- /);
    expect((error as ConfigError).exitCode).toBe(1);
  });

  it('requires the [graphql] section', () => {
    expect(() => parseConfig('[vault]\nserver = "x"\n', 'c.toml')).toThrow(
      /graphql: expected object, found nothing/,
    );
  });

  it('names the line and column of a TOML syntax error', () => {
    expect(() => parseConfig('[graphql]\nserver = "unterminated\n', 'bad.toml')).toThrow(
      /^bad\.toml:2:\d+: invalid TOML/,
    );
  });

  it('reports a missing file clearly', async () => {
    await expect(loadConfig('/nonexistent/config.toml')).rejects.toThrow(
      'config file not found: /nonexistent/config.toml',
    );
  });

  it('loads a file from disk', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'qr-config-'));
    const path = join(dir, 'config.toml');
    await writeFile(path, '[graphql]\nserver = "file://app-interface"\n');
    const config = await loadConfig(path);
    expect(config.graphql.server).toBe('file://app-interface');
    expect(config.sourcePath).toBe(path);
  });
});
