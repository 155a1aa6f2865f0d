// `npm run receive-webhooks -w dev/devstack`: the tests' webhook receiver as a program beside `make dev`. It listens
// on 127.0.0.1 (PORT, 4000 by default), answers 200 to every request and lists what it got at GET /received.
import { startWebhookReceiver } from './webhookReceiver.js';

const receiver = await startWebhookReceiver({ port: Number(process.env.PORT ?? '4000') });
process.stdout.write(`webhook receiver on ${receiver.url}; what it got: ${receiver.url}/received\n`);
process.on('SIGINT', () => void receiver.stop().then(() => process.exit(0)));
process.on('SIGTERM', () => void receiver.stop().then(() => process.exit(0)));
