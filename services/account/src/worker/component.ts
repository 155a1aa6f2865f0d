import { commonVariables, workerVariables, type ComponentDefinition } from '@frequency-gateway/platform';
import { version } from '../version.js';

export const accountWorkerConfig = {
  ...commonVariables({ cacheKeyPrefix: 'account' }),
  ...workerVariables({ port: 3023 }),
};

export const accountWorker: ComponentDefinition<typeof accountWorkerConfig> = {
  name: 'account-worker',
  title: 'Account Service worker',
  description: 'Signs and submits account transactions and reports their outcomes; serves health and metrics',
  version,
  config: accountWorkerConfig,
  portVariable: 'WORKER_API_PORT',
  setup: () => ({}),
};
