import { readPackageVersion } from '@frequency-gateway/platform';

export const version = readPackageVersion(new URL('../package.json', import.meta.url));
