import { describe, expect, it } from 'vitest';
import { buildDesired, FetchResourceError } from './index.ts';
import { body, pc, res, sel } from './test-support/context.ts';

describe('resource', () => {
  it('resource: parses YAML 1.1 and drops $schema', async () => {
    const or = await buildDesired(
      sel,
      res({
        provider: 'resource',
        path: {
          path: '/a.yml',
          content:
            '$schema: /x\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  enabled: yes\n',
        },
      }),
      pc,
    );
    expect(body(or)).toEqual({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'a' },
      data: { enabled: true },
    });
  });

  it('resource: a file that does not parse is a fetch error naming the path, the reason and the line', async () => {
    // The original's message stays as the prefix (users grep for it); the reason follows.
    await expect(
      buildDesired(
        sel,
        res({ provider: 'resource', path: { path: '/b.yml', content: 'kind: x\na: [' } }),
        pc,
      ),
    ).rejects.toThrow(
      new FetchResourceError(
        "Could not parse data. Skipping resource: /b.yml: invalid YAML: while parsing a flow node: expected the node content, but found '<stream-end>' (line 2, column 5)",
      ),
    );
    await expect(
      buildDesired(
        sel,
        res({ provider: 'route', path: { path: '/r.yml', content: '- 1\n- 2\n' } }),
        pc,
      ),
    ).rejects.toThrow(
      new FetchResourceError(
        'Could not parse data. Skipping resource: /r.yml: a resource file must hold a mapping, not list',
      ),
    );
  });

  it('resource: validate_json checks every data value', async () => {
    const content =
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  ok: "{}"\n  bad: "{nope"\n';
    await expect(
      buildDesired(
        sel,
        res({ provider: 'resource', validate_json: true, path: { path: '/c.yml', content } }),
        pc,
      ),
    ).rejects.toThrow('invalid json in /c.yml under bad');
  });

  it('resource: an invalid name is rejected with the original message', async () => {
    await expect(
      buildDesired(
        sel,
        res({
          provider: 'resource',
          path: {
            path: '/d.yml',
            content: 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: Bad_Name\n',
          },
        }),
        pc,
      ),
    ).rejects.toThrow(/metadata.name: Invalid value: "Bad_Name"/);
  });
});
