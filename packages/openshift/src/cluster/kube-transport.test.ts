import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import type { IncomingMessage } from 'node:http';
import { type FakeKubeApiServer, startFakeKubeApiServer } from '@qontract/fake-kube-apiserver';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KubeTransport, PAGE_BUFFERS } from './kube-transport.ts';

let server: FakeKubeApiServer;

beforeAll(async () => {
  server = await startFakeKubeApiServer({ clusters: [{ name: 'c1', token: 'tok-c1' }] });
  // A page of about 300 KB: many chunks on the wire, read into a lent buffer.
  server.seed(
    'c1',
    Array.from({ length: 300 }, (_, i) => ({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: `cm-${i}`, namespace: 'ns1' },
      data: { value: 'x'.repeat(1000) },
    })),
  );
});
afterAll(async () => server.close());

/** The answers Node's HTTP client received while `use` ran (its diagnostics channel). */
async function answersDuring(use: () => Promise<void>): Promise<IncomingMessage[]> {
  const answers: IncomingMessage[] = [];
  const onResponse = (message: unknown) => {
    answers.push((message as { response: IncomingMessage }).response);
  };
  subscribe('http.client.response.finish', onResponse);
  try {
    await use();
  } finally {
    unsubscribe('http.client.response.finish', onResponse);
  }
  return answers;
}

describe('KubeTransport: what a request leaves behind', () => {
  // Node's https.Agent keeps each connection's first request and its answer for
  // as long as the connection lives (the socket's TLS-session listener closes
  // over them). A 'data' listener left on that answer kept the page's chunks:
  // about 40 MiB in a loop over 20 clusters, which raised watch mode's peak RSS
  // and made the collector mark the heap once more per warm run.
  it('leaves no reader on an answer once its body is read, raw page or parsed object', async () => {
    const c = server.cluster('c1');
    const caData = server.kubeconfigObject().clusters[0]!.cluster['certificate-authority-data'];
    const transport = new KubeTransport({ name: 'c1', server: c.url, token: c.token, caData });
    try {
      let page: Buffer | undefined;
      let list: unknown;
      const answers = await answersDuring(async () => {
        page = (await transport.request('GET', '/api/v1/namespaces/ns1/configmaps', 'list', {
          raw: true,
        })) as Buffer;
        PAGE_BUFFERS.give(page);
        list = await transport.request('GET', '/api/v1/namespaces/ns1/configmaps', 'list', {
          query: { limit: 2 },
        });
      });
      expect(page!.length).toBeGreaterThan(300_000);
      expect((list as { items: unknown[] }).items).toHaveLength(2);
      expect(answers).toHaveLength(2);
      for (const answer of answers) {
        expect(answer.complete).toBe(true);
        expect(answer.listenerCount('data')).toBe(0);
      }
    } finally {
      await transport.close();
    }
  });
});
