import { Redis } from 'ioredis';
import { startRedisServer } from '../src/index.js';

describe('a private redis-server', () => {
  it('starts on a free port with a password, survives kill and restart, and stops', async () => {
    const server = await startRedisServer({ password: 'pw-1234' });
    expect(server.url).toBe(`redis://:pw-1234@127.0.0.1:${server.port}`);
    const wrong = new Redis(`redis://:wrong@127.0.0.1:${server.port}`, {
      lazyConnect: true,
      retryStrategy: () => null,
    });
    wrong.on('error', () => undefined);
    await expect(wrong.connect()).rejects.toThrow();
    // The failed connection is already closed; disconnecting again would leave ioredis' 2 s close timer behind.
    expect(wrong.status).toBe('end');

    const client = new Redis(server.url, { maxRetriesPerRequest: 0 });
    client.on('error', () => undefined);
    expect(await client.ping()).toBe('PONG');
    await server.kill('SIGKILL');
    await expect(client.ping()).rejects.toThrow();
    await server.restart();
    // A client that was connected before the crash reconnects by itself.
    await new Promise((resolve) => (client.status === 'ready' ? resolve(undefined) : client.once('ready', resolve)));
    expect(await client.ping()).toBe('PONG');
    const fresh = new Redis(server.url);
    expect(await fresh.ping()).toBe('PONG');
    fresh.disconnect();
    client.disconnect();
    await server.stop();
    const refused = new Redis({ port: server.port, lazyConnect: true, retryStrategy: () => null });
    refused.on('error', () => undefined);
    await expect(refused.connect()).rejects.toThrow(/ECONNREFUSED|Connection is closed/);
  });
});
