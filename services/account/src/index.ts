import { accountApi } from './api/component.js';
import { accountWorker } from './worker/component.js';

export { accountApi, accountWorker };
export { ACCOUNT_QUEUES } from './queues.js';

/** The components of this service, by the argument that selects them in main.ts. */
export const components = [accountApi, accountWorker] as const;
