// The chart's alerting rules (templates/prometheusrule.yaml) as Prometheus sees them: rendered by a real Helm,
// accepted by `promtool check rules`, and each alert proven by `promtool test rules` (charts/test/alerts) to fire on
// a series that should fire it and to stay silent on one that should not; every alert links a runbook section
// that exists in docs/runbooks.md.
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import { repositoryRoot } from '@frequency-gateway/tools/components';
import { chartHelm, named, PREFIX, REQUIRED } from './chartRendering.js';
import { schemaProblems, type K8sObject } from './support/kubernetesObjects.js';
import { runPromtool } from './support/promtool.js';

const { render, refusal } = chartHelm();
const RULE_TESTS = join(repositoryRoot, 'charts', 'test', 'alerts', 'rules.promtool.yaml');
const RUNBOOKS = join(repositoryRoot, 'docs', 'runbooks.md');
const MONITORED = { ...REQUIRED, metrics: { serviceMonitor: { enabled: true } } };

interface AlertingRule {
  alert: string;
  expr: string;
  for: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
}
interface RuleGroup<Rule = AlertingRule> {
  name: string;
  rules: Rule[];
}
type BareRule = Omit<AlertingRule, 'annotations'>;
interface RuleTestFile {
  tests: { name: string; alert_rule_test?: { alertname: string; exp_alerts: unknown[] }[] }[];
}

const groupsOf = (objects: K8sObject[]): RuleGroup[] =>
  (named(objects, 'PrometheusRule', PREFIX)?.spec?.groups ?? []) as RuleGroup[];
const alertsOf = <Rule>(ruleGroups: RuleGroup<Rule>[]): Rule[] => ruleGroups.flatMap((group) => group.rules);

describe('the alerting rules of the chart', () => {
  const scratch = mkdtempSync(join(tmpdir(), 'gateway-alerts-'));
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));
  let groups: RuleGroup[];
  beforeAll(async () => (groups = groupsOf(await render(MONITORED))));

  /** Writes `ruleGroups` as a Prometheus rules file (and the unit tests beside it) in a folder of their own. */
  function rulesFolder(name: string, ruleGroups: RuleGroup<AlertingRule | BareRule>[]): string {
    const folder = mkdtempSync(join(scratch, `${name}-`));
    writeFileSync(join(folder, 'rules.yaml'), stringifyYaml({ groups: ruleGroups }));
    copyFileSync(RULE_TESTS, join(folder, 'rules.promtool.yaml'));
    return folder;
  }

  /** The groups without annotations, each rule passed through `change`. */
  const bare = (change: (rule: BareRule) => BareRule = (rule) => rule): RuleGroup<BareRule>[] =>
    groups.map((group) => ({
      ...group,
      rules: group.rules.map(({ annotations: _annotations, ...rule }) => change(rule)),
    }));

  it('render with the ServiceMonitors as one PrometheusRule valid against the operator schema, and not without them', async () => {
    const objects = await render(MONITORED);
    const rule = named(objects, 'PrometheusRule', PREFIX)!;
    expect(schemaProblems(rule)).toEqual([]);
    expect(alertsOf(groups).map((r) => r.alert)).toHaveLength(14);
    expect(groupsOf(await render(REQUIRED))).toEqual([]);
    const switchedOff = {
      ...REQUIRED,
      metrics: { serviceMonitor: { enabled: true }, prometheusRule: { enabled: false } },
    };
    expect(groupsOf(await render(switchedOff))).toEqual([]);
    expect(objects.filter((o) => o.kind === 'ServiceMonitor').length).toBeGreaterThan(0);
  });

  it('are accepted by promtool check rules, annotations included', async () => {
    const folder = rulesFolder('check', groups);
    const { ok, output } = await runPromtool(['check', 'rules', 'rules.yaml'], folder);
    expect(output).toContain('SUCCESS: 14 rules found');
    expect(ok).toBe(true);
  });

  it('each fire on a series that should fire them and stay silent on one that should not (promtool test rules)', async () => {
    // Annotations are left out: their templates are checked above, and the tests state what fires, by its labels.
    const { ok, output } = await runPromtool(['test', 'rules', 'rules.promtool.yaml'], rulesFolder('test', bare()));
    expect(output).toContain('SUCCESS');
    expect(ok).toBe(true);

    const tests = (parseYaml(readFileSync(RULE_TESTS, 'utf8')) as RuleTestFile).tests;
    const cases = tests.flatMap((test) => test.alert_rule_test ?? []);
    const names = alertsOf(groups).map((r) => r.alert);
    const firing = new Set(cases.filter((c) => c.exp_alerts.length > 0).map((c) => c.alertname));
    const silent = new Set(cases.filter((c) => c.exp_alerts.length === 0).map((c) => c.alertname));
    expect(names.filter((name) => !firing.has(name))).toEqual([]);
    expect(names.filter((name) => !silent.has(name))).toEqual([]);
    expect(cases.map((c) => c.alertname).filter((name) => !names.includes(name))).toEqual([]);
  });

  it('fail promtool test rules when a threshold no longer holds (the tests can fail)', async () => {
    const loosened = bare((rule) =>
      rule.alert === 'GatewayIntakeBacklog' ? { ...rule, expr: rule.expr.replace(/> 1000$/, '> 5000') } : rule,
    );
    expect(alertsOf(loosened).find((r) => r.alert === 'GatewayIntakeBacklog')!.expr).toMatch(/> 5000$/);
    const { ok, output } = await runPromtool(['test', 'rules', 'rules.promtool.yaml'], rulesFolder('broken', loosened));
    expect(ok).toBe(false);
    expect(output).toContain('GatewayIntakeBacklog');
  });

  it('carry a summary, a description and a runbook_url to their own section of docs/runbooks.md', () => {
    const runbooks = readFileSync(RUNBOOKS, 'utf8');
    const sections = new Set([...runbooks.matchAll(/^## (\S+)\s*$/gm)].map((match) => match[1]!.toLowerCase()));
    for (const rule of alertsOf(groups)) {
      expect(rule.annotations.summary).toMatch(/\S/);
      expect(rule.annotations.description).toMatch(/\S/);
      expect(rule.annotations.runbook_url).toBe(
        `https://github.com/frequency-gateway/frequency-gateway/blob/main/docs/runbooks.md#${rule.alert.toLowerCase()}`,
      );
      expect({ alert: rule.alert, hasSection: sections.has(rule.alert.toLowerCase()) }).toEqual({
        alert: rule.alert,
        hasSection: true,
      });
      expect(['critical', 'warning']).toContain(rule.labels.severity);
    }
  });

  it('are scoped to the release, and take their thresholds, durations and labels from values', async () => {
    for (const rule of alertsOf(groups)) expect(rule.expr).toContain(`namespace="gateway",job=~"${PREFIX}-.*"`);
    const tuned = groupsOf(
      await render({
        ...MONITORED,
        metrics: {
          serviceMonitor: { enabled: true },
          prometheusRule: {
            labels: { release: 'prometheus' },
            runbookUrl: 'https://wiki.example.net/gateway',
            alerts: { intakeBacklog: { threshold: 7, for: '1h' } },
          },
        },
      }),
    );
    const backlog = alertsOf(tuned).find((r) => r.alert === 'GatewayIntakeBacklog')!;
    expect(backlog.expr).toMatch(/> 7$/);
    expect(backlog.for).toBe('1h');
    expect(backlog.annotations.runbook_url).toBe('https://wiki.example.net/gateway#gatewayintakebacklog');
  });

  it.each([
    ['a duration that is not one', { chainUnreachable: { for: 'soon' } }, 'for'],
    ['a ratio above 1', { capacityLow: { remainingRatio: 1.5, for: '5m' } }, 'remainingRatio'],
    ['an unknown alert', { diskFull: { for: '5m' } }, 'diskFull'],
  ])('refuse %s through values.schema.json', async (_what, alerts, field) => {
    const message = await refusal({ ...MONITORED, metrics: { prometheusRule: { alerts } } });
    expect(message).toMatch(/schema/i);
    expect(message).toContain(field);
  });
});
