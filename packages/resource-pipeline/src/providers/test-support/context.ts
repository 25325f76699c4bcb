/** The context and inputs the providers' tests build with: a fake secret reader and renderer. */
import type { SecretReader } from '@qontract/core';
import type { NamespaceData, OpenshiftResourceData, SelectedNamespace } from '../../model.ts';
import type { ProviderContext } from '../context.ts';

const secrets: SecretReader = {
  read: async () => '',
  readAll: async ({ path }): Promise<Record<string, string>> => {
    if (path === 'app/db')
      return {
        user: 'app',
        password: 'p4ss',
        cert_qb64: 'Zm9v\nYmFy',
        'external-resources/updated_at': 'x',
        empty: '',
      };
    if (path === 'app/bad-key') return { 'bad key': 'x' };
    throw new Error(`secret ${path} not found`);
  },
};
/** Every template the renderer was given, with its variables. */
export const renders: Array<{ body: string; variables: Record<string, unknown> }> = [];
export const pc: ProviderContext = {
  integration: 'openshift_resources',
  integrationVersion: '1.9.3',
  secrets,
  repoUrl: 'https://git.example/app-interface',
  render: async (body, o) => {
    renders.push({ body, variables: o.variables });
    return body.replace('{{ name }}', String(o.variables.name));
  },
};
export const sel = {
  namespace: { name: 'ns', cluster: { name: 'c1' } } as unknown as NamespaceData,
  openshiftResources: [],
} as SelectedNamespace;
export const res = (r: Record<string, unknown>) => r as unknown as OpenshiftResourceData;
// biome-ignore lint/suspicious/noExplicitAny: tests read deep into built bodies
export const body = (o: { body: unknown }) => o.body as Record<string, any>;
