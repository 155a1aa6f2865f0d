// Prometheus' HTTP API (/api/v1), reached through a port-forward on loopback: instant queries and active targets.

export interface Sample {
  labels: Record<string, string>;
  value: number;
}

export interface Target {
  labels: Record<string, string>;
  scrapeUrl: string;
  health: string;
  lastError: string;
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

const isRecord = (value: Json | undefined): value is { [key: string]: Json } =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const stringRecord = (value: Json | undefined, what: string): Record<string, string> => {
  if (!isRecord(value)) throw new Error(`Prometheus answered without ${what}`);
  return Object.fromEntries(Object.entries(value).map(([key, entry]) => [key, String(entry)]));
};

async function call(baseUrl: string, path: string): Promise<{ [key: string]: Json }> {
  const response = await fetch(`${baseUrl}/api/v1/${path}`, { signal: AbortSignal.timeout(10_000) });
  const body = (await response.json()) as Json;
  if (!isRecord(body) || body.status !== 'success' || !isRecord(body.data))
    throw new Error(`Prometheus ${path}: ${response.status} ${JSON.stringify(body)}`);
  return body.data;
}

/** An instant query whose result is a vector. */
export async function query(baseUrl: string, promql: string): Promise<Sample[]> {
  const data = await call(baseUrl, `query?query=${encodeURIComponent(promql)}`);
  if (data.resultType !== 'vector' || !Array.isArray(data.result))
    throw new Error(`Prometheus query ${promql}: not a vector: ${JSON.stringify(data)}`);
  return data.result.map((entry) => {
    if (!isRecord(entry) || !Array.isArray(entry.value)) throw new Error(`Prometheus sample: ${JSON.stringify(entry)}`);
    return { labels: stringRecord(entry.metric, 'a metric'), value: Number(entry.value[1]) };
  });
}

/** The one value of a query that sums to a single series; undefined while it has none. */
export async function scalar(baseUrl: string, promql: string): Promise<number | undefined> {
  const samples = await query(baseUrl, promql);
  if (samples.length > 1) throw new Error(`Prometheus query ${promql}: ${samples.length} series, expected one`);
  return samples[0]?.value;
}

export async function activeTargets(baseUrl: string): Promise<Target[]> {
  const data = await call(baseUrl, 'targets?state=active');
  if (!Array.isArray(data.activeTargets)) throw new Error(`Prometheus targets: ${JSON.stringify(data)}`);
  return data.activeTargets.map((entry) => {
    if (!isRecord(entry)) throw new Error(`Prometheus target: ${JSON.stringify(entry)}`);
    return {
      labels: stringRecord(entry.labels, 'target labels'),
      scrapeUrl: String(entry.scrapeUrl),
      health: String(entry.health),
      lastError: String(entry.lastError ?? ''),
    };
  });
}

export interface Alert {
  labels: Record<string, string>;
  state: 'pending' | 'firing';
  /** When its condition first held (the alert went pending). */
  activeAt: Date;
}

/** The alerts pending or firing now. */
export async function activeAlerts(baseUrl: string): Promise<Alert[]> {
  const data = await call(baseUrl, 'alerts');
  if (!Array.isArray(data.alerts)) throw new Error(`Prometheus alerts: ${JSON.stringify(data)}`);
  return data.alerts.map((entry) => {
    if (!isRecord(entry)) throw new Error(`Prometheus alert: ${JSON.stringify(entry)}`);
    const state = String(entry.state);
    if (state !== 'pending' && state !== 'firing') throw new Error(`Prometheus alert state: ${state}`);
    return { labels: stringRecord(entry.labels, 'alert labels'), state, activeAt: new Date(String(entry.activeAt)) };
  });
}

/** The alerting rules loaded, by the file (one per PrometheusRule: `<namespace>-<name>-<uid>.yaml`) they came from. */
export async function alertingRules(baseUrl: string): Promise<{ file: string; alert: string; duration: number }[]> {
  const data = await call(baseUrl, 'rules?type=alert');
  if (!Array.isArray(data.groups)) throw new Error(`Prometheus rules: ${JSON.stringify(data)}`);
  return data.groups.flatMap((group) => {
    if (!isRecord(group) || !Array.isArray(group.rules))
      throw new Error(`Prometheus rule group: ${JSON.stringify(group)}`);
    const file = String(group.file);
    return group.rules.map((rule) => {
      if (!isRecord(rule)) throw new Error(`Prometheus rule: ${JSON.stringify(rule)}`);
      return { file, alert: String(rule.name), duration: Number(rule.duration) };
    });
  });
}
