import type { ConfigOf, ConfigSpec } from './variable.js';

export const REDACTED = '[redacted]';

/** Replaces the password (and user) of a URL so that the host and path can still be shown. */
export function redactUrl(value: string): string {
  try {
    const url = new URL(value);
    if (url.username === '' && url.password === '') return value;
    if (url.password !== '') url.password = '***';
    else url.username = '***';
    return url.toString();
  } catch {
    return REDACTED;
  }
}

/**
 * Masks the credentials of every URL inside free text, such as an error message quoting a connection string,
 * for text that leaves the process where no list of secrets can be trusted to be complete. It masks up to the
 * last '@' of the URL, so that a password containing '@' or '/' is masked whole (at the price of masking a
 * little more than needed when a later part of the URL holds an '@').
 */
export function redactUrlsIn(text: string): string {
  return text.replace(/\b([a-z][a-z0-9+.-]*:\/\/)\S*@/gi, '$1***@');
}

/** A copy of the configuration that is safe to log or show: secrets replaced, URL credentials masked. */
export function redactConfig<S extends ConfigSpec>(spec: S, config: ConfigOf<S>): Record<string, unknown> {
  const shown: Record<string, unknown> = {};
  for (const [name, variable] of Object.entries(spec)) {
    const value = (config as Record<string, unknown>)[name];
    if (value === undefined) continue;
    if (variable.secret) shown[name] = REDACTED;
    else if (variable.urlWithCredentials && typeof value === 'string') shown[name] = redactUrl(value);
    else if (variable.urlWithCredentials && Array.isArray(value))
      shown[name] = value.map((url) => redactUrl(String(url)));
    else shown[name] = value;
  }
  return shown;
}

/**
 * Every secret string in the configuration, including the credentials inside URLs, so that the logger can
 * scrub them from any line that would otherwise carry them (an error message quoting a URL, say).
 */
export function secretValues<S extends ConfigSpec>(spec: S, config: ConfigOf<S>): string[] {
  const values = new Set<string>();
  for (const [name, variable] of Object.entries(spec)) {
    const raw = (config as Record<string, unknown>)[name];
    // A list of URLs (several nodes) is checked URL by URL.
    for (const value of Array.isArray(raw) && variable.urlWithCredentials ? raw : [raw]) {
      if (typeof value === 'string' && value !== '') collectSecrets(variable, value, values);
    }
  }
  // Very short values would scrub innocent text everywhere; they are still redacted by key.
  return [...values].filter((v) => v.length >= 4);
}

/** The secret strings of one value: the whole of a secret, the password of a URL that may carry one. */
function collectSecrets(
  variable: { secret: boolean; urlWithCredentials: boolean },
  value: string,
  values: Set<string>,
): void {
  if (variable.secret) {
    values.add(value);
    // user:pass style secrets also leak as their password half.
    const colon = value.indexOf(':');
    if (colon > 0 && colon < value.length - 1) values.add(value.slice(colon + 1));
  }
  if (variable.urlWithCredentials) {
    try {
      const url = new URL(value);
      if (url.password !== '') values.add(decodeURIComponent(url.password)).add(url.password);
    } catch {
      values.add(value);
    }
  }
}
