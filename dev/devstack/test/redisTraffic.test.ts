import { Redis } from 'ioredis';
import { redisTraffic, startRedisServer, topCommands, trafficPer } from '../src/index.js';

describe("a Redis server's traffic", () => {
  it('counts the commands run between two readings (a script’s own among them), by name, and the bytes', async () => {
    const server = await startRedisServer();
    const client = new Redis(server.url);
    try {
      const before = await redisTraffic(server.url);
      for (let i = 0; i < 10; i++) await client.set(`key:${i}`, 'x'.repeat(1000));
      // One EVAL running two HSETs: three commands.
      await client.eval("redis.call('HSET', KEYS[1], 'a', 1); return redis.call('HSET', KEYS[1], 'b', 2)", 1, 'hash');
      const per = trafficPer(before, await redisTraffic(server.url), 2);
      expect(per.byCommand.set).toBe(5);
      expect(per.byCommand.hset).toBe(1);
      expect(per.byCommand.eval).toBe(0.5);
      // The readings' own INFO and the client's connection setup count too, a few commands in all.
      expect(per.commands).toBeGreaterThanOrEqual(6.5);
      expect(per.commands).toBeLessThan(10);
      expect(per.bytesIn).toBeGreaterThan(5 * 1000);
      expect(topCommands(per, 1)).toBe('set 5.0');
    } finally {
      client.disconnect();
      await server.stop();
    }
  });
});
