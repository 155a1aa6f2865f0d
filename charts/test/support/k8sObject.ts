/** A rendered manifest, loosely typed: tests read what they need from it. */
export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- manifests are checked against their schemas
  spec?: any;
  data?: Record<string, string>;
}
