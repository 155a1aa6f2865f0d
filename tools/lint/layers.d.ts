// Types of layers.js for the test that lints with it (tools/test/layers.test.ts).
import type { Linter } from 'eslint';

export interface PackageLayer {
  dir: string;
  production: boolean;
  uses: string[];
  service?: boolean;
}

export const PACKAGES: Record<string, PackageLayer>;

/** The flat-config blocks that enforce the layering. */
export function layerRules(): Linter.Config[];
