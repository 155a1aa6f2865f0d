import { startKubo, type LocalKubo } from '../src/index.js';

describe('startKubo', () => {
  let kubo: LocalKubo;
  beforeAll(async () => (kubo = await startKubo()), 60_000);
  afterAll(async () => kubo?.stop());

  it('runs an offline Kubo whose RPC API stores content the gateway serves', async () => {
    const form = new FormData();
    form.append('file', new Blob(['devstack kubo']), 'a.txt');
    const added = await fetch(`${kubo.apiUrl}/api/v0/add?cid-version=1&raw-leaves=true`, {
      method: 'POST',
      body: form,
    });
    const { Hash } = (await added.json()) as { Hash: string };
    expect(Hash).toMatch(/^bafkrei/);
    expect(await (await fetch(`${kubo.gatewayUrl}/ipfs/${Hash}`)).text()).toBe('devstack kubo');
  });

  it('stops, and its API no longer answers', async () => {
    const api = kubo.apiUrl;
    await kubo.stop();
    await expect(fetch(`${api}/api/v0/version`, { method: 'POST' })).rejects.toThrow();
  });
});
