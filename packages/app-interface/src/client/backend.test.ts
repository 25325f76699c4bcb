import { describe, expect, it } from 'vitest';
import { parseBackendSpec } from './backend.ts';
import { GqlBackendError } from './errors.ts';

describe('parseBackendSpec', () => {
  it('selects the remote backend for http(s) URLs', () => {
    expect(parseBackendSpec('https://qs.example.com/graphql', '/etc/q/config.toml')).toEqual({
      kind: 'remote',
      url: 'https://qs.example.com/graphql',
    });
    expect(parseBackendSpec('http://127.0.0.1:4000/graphql', '')).toMatchObject({ kind: 'remote' });
  });

  it('resolves relative file: paths against the config file directory', () => {
    expect(parseBackendSpec('file://app-interface', '/work/examples/config.toml')).toEqual({
      kind: 'embedded',
      source: '/work/examples/app-interface',
    });
    expect(parseBackendSpec('file:../data/bundle.json', '/work/examples/config.toml')).toEqual({
      kind: 'embedded',
      source: '/work/data/bundle.json',
    });
  });

  it('keeps absolute paths', () => {
    expect(parseBackendSpec('file:///srv/bundle.json', '/work/config.toml')).toEqual({
      kind: 'embedded',
      source: '/srv/bundle.json',
    });
    expect(parseBackendSpec('file:/srv/app-interface', '')).toEqual({
      kind: 'embedded',
      source: '/srv/app-interface',
    });
  });

  it('rejects anything else with a message naming both forms', () => {
    expect(() => parseBackendSpec('ftp://x', '')).toThrow(GqlBackendError);
    expect(() => parseBackendSpec('app-interface', '')).toThrow(
      /http\(s\):\/\/ URL of a qontract-server, or file:\/\/PATH/,
    );
  });
});
