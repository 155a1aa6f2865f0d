// The chart rendered by a real Helm, for the chart test files: values files in a scratch folder, `helm template`,
// `helm lint`, and refusals read from Helm's error output.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { parseAllDocuments } from 'yaml';
import { findTool } from '@frequency-gateway/devstack';
import { repositoryRoot } from '@frequency-gateway/tools/components';
import type { K8sObject } from './support/kubernetesObjects.js';

const run = promisify(execFile);
export const CHART = join(repositoryRoot, 'charts', 'frequency-gateway');
export const RELEASE = 'gw';
export const NAMESPACE = 'gateway';
/** The resource name prefix of release `gw`. */
export const PREFIX = 'gw-frequency-gateway';

const helm = findTool('helm', 'HELM_BIN');

function requireHelm(): string {
  if (!helm) throw new Error('missing: helm — build it with `make tools` (or set HELM_BIN)');
  return helm;
}

/** What has no default: the chain, the provider, and where the provider's key is. */
export const REQUIRED = {
  chain: { url: 'wss://frequency.example.net', providerId: '7' },
  secrets: { existingSecret: 'gateway-keys' },
};

/** Helm for one test file: values files go to a scratch folder removed after the file's tests. */
export function chartHelm() {
  const scratch = mkdtempSync(join(tmpdir(), 'gateway-chart-'));
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));
  let files = 0;
  const valuesFile = (values: object) => {
    const file = join(scratch, `values-${files++}.json`);
    writeFileSync(file, JSON.stringify(values));
    return file;
  };
  const helmRun = (args: string[]) => run(requireHelm(), args, { maxBuffer: 32 * 1024 * 1024 });

  /** Every object `helm template` renders (hooks and test Pods included). */
  async function render(values: object, release = RELEASE): Promise<K8sObject[]> {
    const { stdout } = await helmRun(['template', release, CHART, '--namespace', NAMESPACE, '-f', valuesFile(values)]);
    return parseAllDocuments(stdout)
      .map((document) => document.toJS() as K8sObject | null)
      .filter((object): object is K8sObject => object !== null);
  }

  /** helm template's error output for values it must refuse. */
  async function refusal(values: object): Promise<string> {
    try {
      await render(values);
    } catch (error) {
      return String((error as { stderr?: string }).stderr ?? error);
    }
    throw new Error(`helm template accepted ${JSON.stringify(values)}`);
  }

  return { helmRun, valuesFile, render, refusal };
}

export const named = (objects: K8sObject[], kind: string, name: string) =>
  objects.find((o) => o.kind === kind && o.metadata.name === name);

/** The objects Helm runs as hooks of `event` (pre-install, pre-upgrade, test). */
export const hooksOf = (objects: K8sObject[], event: string) =>
  objects.filter((o) => (o.metadata.annotations?.['helm.sh/hook'] ?? '').split(',').includes(event));
