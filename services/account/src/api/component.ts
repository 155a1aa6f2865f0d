import { apiVariables, commonVariables, type ComponentDefinition } from '@frequency-gateway/platform';
import { ACCOUNT_QUEUES } from '../queues.js';
import { version } from '../version.js';

export const accountApiConfig = {
  ...commonVariables({ cacheKeyPrefix: 'account' }),
  ...apiVariables({ port: 3013 }),
};

export const accountApi: ComponentDefinition<typeof accountApiConfig> = {
  name: 'account-api',
  title: 'Account Service',
  description:
    'Sign In With Frequency registration and login, account, handle, key and delegation look-ups, transaction webhooks',
  version,
  config: accountApiConfig,
  portVariable: 'API_PORT',
  setup: ({ queues }) => {
    for (const name of Object.values(ACCOUNT_QUEUES)) queues.queue(name);
    return { queueBoard: true };
  },
};
