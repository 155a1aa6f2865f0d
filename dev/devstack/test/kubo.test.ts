import { startKubo, type LocalKubo } from '../src/index.js';

describe('startKubo', () => {
  let kubo: LocalKubo;
  beforeAll(async () => (kubo = await startKubo()), 60_000);
  afterAll(async () => kubo?.stop());

  let cid = '';

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
    cid = Hash;
  });

  it('halts (its API no longer answers) and restarts on the same ports with what it stored', async () => {
    const pid = kubo.pid();
    await kubo.halt();
    await expect(fetch(`${kubo.apiUrl}/api/v0/version`, { method: 'POST' })).rejects.toThrow();
    await kubo.restart();
    expect(kubo.pid()).not.toBe(pid);
    expect((await fetch(`${kubo.apiUrl}/api/v0/version`, { method: 'POST' })).status).toBe(200);
    expect(await (await fetch(`${kubo.gatewayUrl}/ipfs/${cid}`)).text()).toBe('devstack kubo');
  }, 60_000);

  it('stops, and its API no longer answers', async () => {
    const api = kubo.apiUrl;
    await kubo.stop();
    await expect(fetch(`${api}/api/v0/version`, { method: 'POST' })).rejects.toThrow();
  });
});
