import { launcher, runComponentFromArgs } from '@frequency-gateway/platform';
import { accountApi, accountWorker } from './index.js';

await runComponentFromArgs('account', { api: launcher(accountApi), worker: launcher(accountWorker) });
