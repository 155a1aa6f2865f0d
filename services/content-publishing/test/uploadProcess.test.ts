import { startDevchain, type Devchain } from '@frequency-gateway/devchain';
import { startKubo, startRedisServer, type LocalKubo, type LocalRedis } from '@frequency-gateway/devstack';
import { startComponentProcess, type ComponentProcess } from '@frequency-gateway/devstack/gateway';
import { streamUpload } from './support/apiProcess.js';

const MiB = 1024 * 1024;
const GiB = 1024 * MiB;

/** The recursive pins of the Kubo node. */
async function pins(kubo: LocalKubo): Promise<string[]> {
  const response = await fetch(`${kubo.apiUrl}/api/v0/pin/ls?type=recursive`, { method: 'POST' });
  return Object.keys(((await response.json()) as { Keys?: Record<string, unknown> }).Keys ?? {}).sort();
}

describe('uploads through the api process into Kubo', () => {
  let redis: LocalRedis;
  let devchain: Devchain;
  let kubo: LocalKubo;
  let api: ComponentProcess;
  const env = () => ({
    REDIS_URL: redis.url,
    FREQUENCY_API_WS_URL: devchain.url,
    PROVIDER_ID: '1',
    IPFS_ENDPOINT: kubo.apiUrl,
  });

  beforeAll(async () => {
    [redis, devchain, kubo] = await Promise.all([startRedisServer(), startDevchain(), startKubo()]);
    api = await startComponentProcess('content-publishing', 'api', {
      ...env(),
      FILE_UPLOAD_MAX_SIZE_IN_BYTES: String(2 * GiB),
    });
  }, 120_000);
  afterAll(async () => {
    await api?.stop();
    await kubo?.stop();
    await devchain?.close();
    await redis?.stop();
  });

  it('streams a 1 GiB file into IPFS with the api growing by less than 64 MiB of RSS', async () => {
    api.resetPeak();
    const before = api.memory();
    const { status, text } = await streamUpload(api.url, GiB);
    const after = api.memory();
    expect(status).toBe(202);
    const [file] = (JSON.parse(text) as { files: { cid: string }[] }).files;
    expect(file?.cid).toMatch(/^bafybei/);
    expect(await pins(kubo)).toContain(file!.cid);
    const stat = await fetch(`${kubo.apiUrl}/api/v0/files/stat?arg=/ipfs/${file!.cid}`, { method: 'POST' });
    expect(((await stat.json()) as { Size: number }).Size).toBe(GiB);
    expect(after.peak - before.rss).toBeLessThan(64 * MiB);
  }, 300_000);

  it('pins nothing of an upload that is too large or cut short, and serves the next one', async () => {
    const small = await startComponentProcess('content-publishing', 'api', {
      ...env(),
      FILE_UPLOAD_MAX_SIZE_IN_BYTES: String(2 * MiB),
    });
    try {
      const before = await pins(kubo);
      const tooLarge = await streamUpload(small.url, 3 * MiB, { path: '/v1/asset/upload', method: 'PUT' });
      expect(tooLarge.status).toBe(413);
      expect(tooLarge.text).toMatch(/is larger than 2097152 bytes/);
      await streamUpload(small.url, 40 * MiB, { abortAfter: MiB });
      expect(await pins(kubo)).toEqual(before);
      expect((await fetch(`${small.url}/livez`)).status).toBe(200);
      const next = await streamUpload(small.url, MiB);
      expect(next.status).toBe(202);
      const { cid } = (JSON.parse(next.text) as { files: { cid: string }[] }).files[0]!;
      expect(await pins(kubo)).toEqual([...before, cid].sort());
    } finally {
      await small.stop();
    }
  }, 120_000);
});
