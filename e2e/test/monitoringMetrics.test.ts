// Every metric the chart's alerting rules and Grafana dashboards read is one the gateway exports: the six
// components run as processes (on a devchain, Redis and Kubo of their own) and each one's /metrics is scraped; the
// rules are the ones Helm renders from charts/frequency-gateway, the dashboards its dashboards/*.json. An alert on
// a metric nobody exports would never fire; a panel on one would stay empty.
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { parseAllDocuments } from 'yaml';
import { findTool, waitUntil } from '@frequency-gateway/devstack';
import { startLocalGateway, type LocalGateway } from '@frequency-gateway/devstack/gateway';

const run = promisify(execFile);
const CHART = fileURLToPath(new URL('../../charts/frequency-gateway', import.meta.url));
/** Made by Prometheus for every target it scrapes, not by the target. */
const SCRAPE_SERIES = new Set(['up']);

/** The PromQL of every alerting rule Helm renders with the ServiceMonitors on. */
async function renderedAlertExpressions(): Promise<Map<string, string>> {
  const helm = findTool('helm', 'HELM_BIN');
  if (!helm) throw new Error('missing: helm — build it with `make tools` (or set HELM_BIN)');
  const { stdout } = await run(helm, [
    'template',
    'gw',
    CHART,
    '--namespace',
    'gateway',
    '--show-only',
    'templates/prometheusrule.yaml',
    '--set',
    'chain.url=wss://frequency.example.net,chain.providerId=7,secrets.existingSecret=gateway-keys',
    '--set',
    'metrics.serviceMonitor.enabled=true',
  ]);
  const [rule] = parseAllDocuments(stdout).map((document) => document.toJS());
  const groups = rule.spec.groups as { rules: { alert: string; expr: string }[] }[];
  return new Map(groups.flatMap((group) => group.rules.map((r) => [r.alert, r.expr] as const)));
}

/** The PromQL of every panel of every dashboard, by dashboard and panel title. */
function dashboardExpressions(): Map<string, string> {
  const folder = join(CHART, 'dashboards');
  const expressions = new Map<string, string>();
  for (const file of readdirSync(folder).filter((name) => name.endsWith('.json'))) {
    const dashboard = JSON.parse(readFileSync(join(folder, file), 'utf8')) as {
      panels: { title: string; targets?: { expr: string }[] }[];
    };
    for (const panel of dashboard.panels)
      for (const [index, target] of (panel.targets ?? []).entries())
        expressions.set(`${file}: ${panel.title} #${index}`, target.expr);
  }
  return expressions;
}

/** Metric names a PromQL expression selects: every name followed by a label matcher (the rules always scope). */
const metricNames = (expr: string) => [...expr.matchAll(/([a-zA-Z_:][a-zA-Z0-9_:]*)\{/g)].map((match) => match[1]!);

/** The series names a /metrics exposition declares; a histogram declares its _bucket, _sum and _count. */
function exportedNames(exposition: string): Set<string> {
  const names = new Set<string>();
  for (const [, name, type] of exposition.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
    names.add(name!);
    if (type === 'histogram' || type === 'summary')
      for (const suffix of ['_bucket', '_sum', '_count']) names.add(name! + suffix);
  }
  return names;
}

describe('the metrics the alerting rules and dashboards read', () => {
  let gateway: LocalGateway;
  beforeAll(async () => {
    // A rate limit, as production runs: the dashboards show what it refuses (its counter exists only with one).
    gateway = await startLocalGateway({ env: { RATE_LIMIT_PER_MINUTE: '6000' } });
  }, 180_000);
  afterAll(async () => {
    await gateway?.stop();
  });

  it('are exported by the running components (14 alerts and every dashboard panel; six components scraped)', async () => {
    const alerts = await renderedAlertExpressions();
    expect(alerts.size).toBe(14);
    const panels = dashboardExpressions();
    expect(panels.size).toBeGreaterThan(30);
    const used = new Map<string, string[]>();
    for (const [alert, expr] of [...alerts, ...panels])
      for (const name of metricNames(expr))
        if (!SCRAPE_SERIES.has(name)) used.set(name, [...(used.get(name) ?? []), alert]);
    expect(used.size).toBeGreaterThanOrEqual(30);

    // The workers export some once their chain pipeline runs, which may follow readiness by a moment.
    const exported = new Set<string>();
    const missing = () => [...used.keys()].filter((name) => !exported.has(name));
    await waitUntil(
      async () => {
        for (const component of Object.values(gateway.components)) {
          const text = await (await fetch(`${component.url}/metrics`)).text();
          for (const name of exportedNames(text)) exported.add(name);
        }
        return missing().length === 0;
      },
      60_000,
      'every metric of the alerting rules and dashboards on some component',
    ).catch(() => undefined);
    expect(missing().map((name) => `${name} (${used.get(name)!.join(', ')})`)).toEqual([]);
  }, 120_000);
});
