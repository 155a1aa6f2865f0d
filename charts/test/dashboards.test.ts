// The chart's Grafana dashboards (charts/frequency-gateway/dashboards, templates/dashboards.yaml): ConfigMaps for
// Grafana's sidecar when switched on, each panel querying Prometheus with PromQL that parses (every expression,
// its Grafana variables given values, loaded as a recording rule and checked by promtool) and that is scoped to
// the namespace the dashboard shows. That every metric they read is exported: e2e/test/monitoringMetrics.test.ts.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify as stringifyYaml } from 'yaml';
import { chartHelm, REQUIRED } from './chartRendering.js';
import { schemaProblems, type K8sObject } from './support/kubernetesObjects.js';
import { runPromtool } from './support/promtool.js';

const { render } = chartHelm();

interface Panel {
  type: string;
  title: string;
  targets?: { expr: string }[];
}
interface Dashboard {
  uid: string;
  title: string;
  panels: Panel[];
  templating: { list: { name: string }[] };
}

const dashboardsOf = (objects: K8sObject[]) =>
  objects
    .filter((o) => o.kind === 'ConfigMap' && o.metadata.name.includes('-dashboard-'))
    .map((o) => ({ object: o, dashboard: JSON.parse(Object.values(o.data!)[0]!) as Dashboard }));

/** A panel expression as Prometheus would receive it from Grafana: its variables given values. */
const asQueried = (expr: string) => expr.replaceAll('$__rate_interval', '1m').replaceAll('$namespace', 'gateway');

describe('the Grafana dashboards of the chart', () => {
  const scratch = mkdtempSync(join(tmpdir(), 'gateway-dashboards-'));
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));
  let dashboards: ReturnType<typeof dashboardsOf>;
  beforeAll(async () => {
    dashboards = dashboardsOf(await render({ ...REQUIRED, metrics: { dashboards: { enabled: true } } }));
  });

  /** promtool check rules on the expressions, each a recording rule. */
  async function check(name: string, expressions: string[]) {
    const file = join(scratch, `${name}.yaml`);
    const rules = expressions.map((expr, index) => ({ record: `dashboard:panel_${index}`, expr }));
    writeFileSync(file, stringifyYaml({ groups: [{ name, rules }] }));
    return runPromtool(['check', 'rules', file], scratch);
  }

  it('render as ConfigMaps labelled for the Grafana sidecar when switched on, and not by default', async () => {
    expect(dashboards.map(({ dashboard }) => dashboard.uid).sort()).toEqual([
      'fg-overview',
      'fg-pipeline',
      'fg-process',
    ]);
    for (const { object, dashboard } of dashboards) {
      expect(schemaProblems(object)).toEqual([]);
      expect(object.metadata.labels?.grafana_dashboard).toBe('1');
      expect(dashboard.templating.list.map((variable) => variable.name)).toEqual(['datasource', 'namespace']);
    }
    expect(dashboardsOf(await render(REQUIRED))).toEqual([]);
  });

  it('query Prometheus in every panel with PromQL that parses, scoped to the chosen namespace', async () => {
    for (const { dashboard } of dashboards) {
      const panels = dashboard.panels.filter((panel) => panel.type !== 'row');
      expect(panels.length).toBeGreaterThan(4);
      expect(panels.filter((panel) => (panel.targets ?? []).length === 0).map((panel) => panel.title)).toEqual([]);
      const expressions = panels.flatMap((panel) => panel.targets!.map((target) => target.expr));
      for (const expr of expressions) expect(expr).toContain('namespace="$namespace"');
      const { ok, output } = await check(dashboard.uid, expressions.map(asQueried));
      expect(output).toContain(`SUCCESS: ${expressions.length} rules found`);
      expect(ok).toBe(true);
    }
  });

  it('would be caught with an expression that does not parse (the check can fail)', async () => {
    const { ok, output } = await check('broken', ['sum by (component (rate(http_request_duration_seconds_count[1m]))']);
    expect(ok).toBe(false);
    expect(output).toMatch(/parse error/i);
  });
});
