import { fileURLToPath } from 'node:url';
import * as account from '@frequency-gateway/account';
import * as contentPublishing from '@frequency-gateway/content-publishing';
import * as contentWatcher from '@frequency-gateway/content-watcher';
import type { ConfigSpec } from '@frequency-gateway/platform';

export const repositoryRoot = fileURLToPath(new URL('../../', import.meta.url));

/** One runnable component of the gateway, as the dev runner and the configuration reference see it. */
export interface ComponentEntry {
  /** e.g. account-api */
  name: string;
  /** Folder under services/. */
  service: string;
  /** The argument of the service's main.ts: api or worker. */
  role: string;
  title: string;
  config: ConfigSpec;
  portVariable: string;
  defaultPort: number;
}

const services = [
  { service: 'account', components: account.components },
  { service: 'content-publishing', components: contentPublishing.components },
  { service: 'content-watcher', components: contentWatcher.components },
];

export const COMPONENTS: readonly ComponentEntry[] = services.flatMap(({ service, components }) =>
  components.map((definition) => {
    const portVariable = definition.config[definition.portVariable as keyof typeof definition.config];
    const parsedDefault = portVariable?.schema.safeParse(undefined);
    if (!parsedDefault?.success || typeof parsedDefault.data !== 'number') {
      throw new Error(`${definition.name}: ${definition.portVariable} needs a numeric default`);
    }
    return {
      name: definition.name,
      service,
      role: definition.name.slice(service.length + 1),
      title: definition.title,
      config: definition.config as ConfigSpec,
      portVariable: definition.portVariable,
      defaultPort: parsedDefault.data,
    };
  }),
);
