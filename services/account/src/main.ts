import { runComponentFromArgs } from '@frequency-gateway/platform';
import { accountApi, accountWorker } from './index.js';

await runComponentFromArgs('account', { api: accountApi, worker: accountWorker });
