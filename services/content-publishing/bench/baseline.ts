// The intake baseline: the least an HTTP service can do with a broadcast request (parse the JSON body, put it
// in Redis with one LPUSH, answer 202), on the same Express and ioredis as the api.
import { randomUUID } from 'node:crypto';
import express from 'express';
import { Redis } from 'ioredis';

const redis = new Redis(process.env.REDIS_URL as string);
const app = express();
app.use(express.json({ limit: '1mb' }));
app.get('/livez', (_request, response) => response.json({ status: 'live' }));
app.post('/v1/content/:msaId/broadcast', async (request, response) => {
  const referenceId = randomUUID();
  await redis.lpush(
    'baseline:requests',
    JSON.stringify({ referenceId, msaId: request.params.msaId, body: request.body }),
  );
  response.status(202).json({ referenceId });
});
const server = app.listen(Number(process.env.API_PORT));
process.on('SIGTERM', () => {
  server.close();
  redis.disconnect();
});
