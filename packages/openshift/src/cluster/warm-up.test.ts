import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientNodeRequested, warmUpClusterClients } from './kube-client.ts';

// Its own file: whether client-node's import has begun is state of the module.
let server: Server;
let url: string;

beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.end('{}'));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/graphql`;
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

describe('warmUpClusterClients', () => {
  it('imports client-node only once the first query (a POST) has gone out', async () => {
    warmUpClusterClients();
    expect(clientNodeRequested()).toBe(false);
    // A GET (the bundle sha) does not start it.
    await (await fetch(url.replace('/graphql', '/sha256'))).text();
    await new Promise((resolve) => setImmediate(resolve));
    expect(clientNodeRequested()).toBe(false);
    const answer = fetch(url, { method: 'POST', body: '{"query":"{ x }"}' });
    // Sent, not answered: the import overlaps the server's work on the answer.
    await (await answer).text();
    await new Promise((resolve) => setImmediate(resolve));
    expect(clientNodeRequested()).toBe(true);
  });
});
