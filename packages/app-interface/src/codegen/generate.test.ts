import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { DocumentError, GENERATED_MARKER, generateTypedDocuments } from './generate.ts';
import { runCodegen } from './run-codegen.ts';
import { loadCodegenSchema } from './schema-source.ts';

const repoRoot = fileURLToPath(new URL('../../../../', import.meta.url));
const schema = await loadCodegenSchema(repoRoot);

function generate(source: string): Promise<string> {
  return generateTypedDocuments({
    schema,
    displayPath: 'integrations/x/src/q.graphql',
    source,
    typedDocumentNodeImport: '@qontract/app-interface',
  });
}

function shapeLine(code: string): unknown {
  const m = /Object\.assign\(\w+Document, \{ resultShape: (.*) \}\);/.exec(code);
  if (!m?.[1]) throw new Error('no result shape in the generated code');
  return JSON.parse(m[1]);
}

describe('generateTypedDocuments', () => {
  it('writes types, the typed document and its result shape', async () => {
    const code = await generate(`
      query Clusters($name: String) {
        clusters: clusters_v1(name: $name) {
          name
          labels
          auth {
            service
            ... on ClusterAuthGithubOrgTeam_v1 { org team }
          }
          spec { region ... on ClusterSpec_v1 { version } }
          extra: serverUrl @include(if: true)
        }
      }`);
    expect(code.startsWith(`${GENERATED_MARKER} from integrations/x/src/q.graphql.`)).toBe(true);
    expect(code).toContain(
      "import type { TypedDocumentNode as DocumentNode } from '@qontract/app-interface';",
    );
    expect(code).toContain('export type ClustersQueryVariables = Exact<{');
    expect(code).toMatch(
      /export type ClustersQuery = \{ clusters: Array<\{ name: string, labels: string \| null/,
    );
    expect(code).toContain('export const ClustersDocument = ');
    expect(shapeLine(code)).toEqual({
      f: {
        clusters: {
          t: '[Cluster_v1!]',
          f: {
            name: 'String!',
            labels: 'JSON',
            auth: {
              t: '[ClusterAuth_v1!]!',
              f: { service: 'String!', org: 'String!', team: 'String!' },
              // Only github-org-team items carry them.
              c: ['org', 'team'],
            },
            // A fragment on the field's own interface always applies.
            spec: { t: 'ClusterSpec_v1', f: { region: 'String!', version: 'String!' } },
            extra: 'String!',
          },
          c: ['extra'],
        },
      },
    });
  });

  it('rejects invalid documents with their locations', async () => {
    await expect(generate('query Q { namespaces_v1 { nope } }')).rejects.toThrow(DocumentError);
    await expect(generate('query Q { namespaces_v1 { nope } }')).rejects.toThrow(
      /1:27: Cannot query field "nope" on type "Namespace_v1"/,
    );
    await expect(generate('{ namespaces_v1 { name } }')).rejects.toThrow(
      /1:1: an operation must be named/,
    );
    await expect(generate('fragment F on Namespace_v1 { name }')).rejects.toThrow(
      /no operation: write one named query per file/,
    );
    await expect(generate('query Q {')).rejects.toThrow(/Syntax Error/);
  });

  it('has produced every committed generated file of the repository (CI fails when one is stale)', async () => {
    const result = await runCodegen({ check: true });
    expect(result.failures).toEqual([]);
    expect(result.stale).toEqual([]);
    expect(result.orphans).toEqual([]);
    expect(result.documents).toContain(
      'packages/app-interface/src/client/queries/resource.graphql',
    );
  });
});
