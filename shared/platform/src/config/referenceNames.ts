/**
 * The settings of the reference gateway's env files that this gateway names differently or does not have. A
 * gateway switched over by changing the image keeps its env file: each of these is honoured (carried to the
 * variable that means the same here) or refused at start with what to use instead, never ignored without a word.
 * The reference's other settings have the same name and meaning here (see docs/configuration.md).
 */
export type ReferenceName =
  /** Carried to one or more variables of ours (each component takes those it has), its value converted. */
  | {
      kind: 'renamed';
      to: readonly string[];
      convert?: (value: string) => string | { refused: string };
      /** How the value is carried, when it is not as it is. */
      how?: string;
    }
  /** Accepted with the values that mean what this gateway does anyway; any other value is refused. */
  | { kind: 'fixed'; accepts: readonly string[]; otherwise: string }
  /** Configures nothing of a gateway component, here or there: said once at start, then ignored. */
  | { kind: 'inert'; why: string }
  /** Configures something this gateway does differently: the component refuses to start, saying what to use. */
  | { kind: 'refused'; instead: string };

const seconds = (value: string) =>
  /^\d+$/.test(value) ? String(Number(value) * 1000) : { refused: 'must be a whole number of seconds' };

const WEBHOOK_RETRIES =
  "webhooks are not health-checked: each one is tried WEBHOOK_MAX_ATTEMPTS times, WEBHOOK_RETRY_BASE_MS apart and doubling up to WEBHOOK_RETRY_MAX_MS, then kept in its queue's failed set";

const RATE =
  'RATE_LIMIT_MAX_REQUESTS per RATE_LIMIT_TTL milliseconds (60000 when unset) as a number per minute, refused unless a whole one';

export const REFERENCE_NAMES: Readonly<Record<string, ReferenceName>> = {
  API_BODY_JSON_LIMIT: { kind: 'renamed', to: ['HTTP_JSON_LIMIT'] },
  HTTP_RESPONSE_TIMEOUT_MS: { kind: 'renamed', to: ['WEBHOOK_TIMEOUT_MS', 'SIWF_CODE_TIMEOUT_MS'] },
  PRETTY: {
    kind: 'renamed',
    to: ['LOG_PRETTY'],
    how: '`compact` counts as `true`',
    convert: (value) =>
      ['true', 'compact'].includes(value)
        ? 'true'
        : value === 'false'
          ? 'false'
          : { refused: 'must be true, false or compact' },
  },
  PROVIDER_ACCESS_TOKEN: { kind: 'renamed', to: ['WEBHOOK_BEARER_TOKEN'] },
  WEBHOOK_FAILURE_THRESHOLD: { kind: 'renamed', to: ['WEBHOOK_MAX_ATTEMPTS'], how: 'as the number of attempts' },
  WEBHOOK_RETRY_INTERVAL_SECONDS: {
    kind: 'renamed',
    to: ['WEBHOOK_RETRY_BASE_MS', 'WEBHOOK_RETRY_MAX_MS'],
    how: 'in milliseconds, to both: retries a fixed interval apart, as there',
    convert: seconds,
  },
  // RATE_LIMIT_TTL and RATE_LIMIT_MAX_REQUESTS together make RATE_LIMIT_PER_MINUTE (see rateLimitPerMinute).
  RATE_LIMIT_MAX_REQUESTS: { kind: 'renamed', to: ['RATE_LIMIT_PER_MINUTE'], how: RATE },
  RATE_LIMIT_TTL: { kind: 'renamed', to: ['RATE_LIMIT_PER_MINUTE'], how: RATE },
  RATE_LIMIT_SKIP_SUCCESS: {
    kind: 'fixed',
    accepts: ['false'],
    otherwise: 'every request counts towards RATE_LIMIT_PER_MINUTE; remove it',
  },
  RATE_LIMIT_SKIP_FAILED: {
    kind: 'fixed',
    accepts: ['false'],
    otherwise: 'every request counts towards RATE_LIMIT_PER_MINUTE; remove it',
  },
  RATE_LIMIT_BLOCK_ON_EXCEEDED: {
    kind: 'fixed',
    accepts: ['true'],
    otherwise: 'a client over RATE_LIMIT_PER_MINUTE always gets 429; RATE_LIMIT_PER_MINUTE=0 sets no limit',
  },
  RATE_LIMIT_KEY_PREFIX: {
    kind: 'inert',
    why: "the rate windows are kept under the service's CACHE_KEY_PREFIX hash tag, like every key of the service",
  },
  // Read by the account and content-publishing services here; the reference's content-watcher template has them too.
  PROVIDER_ID: {
    kind: 'inert',
    why: 'the content watcher acts for no provider: it delivers what the chain carries to the webhooks registered with it',
  },
  WEBHOOK_BASE_URL: {
    kind: 'inert',
    why: "the content watcher's webhooks are those registered through its api (POST /v1/webhooks)",
  },
  ACCOUNT_WEBHOOK_PORT: {
    kind: 'inert',
    why: "it is the port of the reference's development webhook logger, which no component here listens on",
  },
  API_TIMEOUT_MS: {
    kind: 'refused',
    instead:
      "the api bounds each of its own waits (chain, Redis, IPFS, SIWF) and does not cut requests off; a deadline for a whole request belongs to the Ingress (e.g. ingress-nginx's proxy-read-timeout)",
  },
  ASSET_EXPIRATION_INTERVAL_SECONDS: {
    kind: 'refused',
    instead: 'uploaded assets stay referable by their CID for good; remove it',
  },
  ASSET_UPLOAD_VERIFICATION_DELAY_SECONDS: {
    kind: 'refused',
    instead:
      'an announcement is checked against the uploaded assets when it arrives (400 naming a missing one), so nothing waits for them; remove it',
  },
  BLOCKCHAIN_SCAN_INTERVAL_SECONDS: {
    kind: 'refused',
    instead: 'the chain is followed by its new-head subscription, not polled; remove it',
  },
  FREQUENCY_TIMEOUT_SECS: {
    kind: 'refused',
    instead:
      'a node that does not answer within 5 s is left for the next one of FREQUENCY_API_WS_URL, and /readyz says so while none answers; remove it',
  },
  HEALTH_CHECK_MAX_RETRIES: { kind: 'refused', instead: WEBHOOK_RETRIES },
  HEALTH_CHECK_MAX_RETRY_INTERVAL_SECONDS: { kind: 'refused', instead: WEBHOOK_RETRIES },
  HEALTH_CHECK_SUCCESS_THRESHOLD: { kind: 'refused', instead: WEBHOOK_RETRIES },
  SIWF_URL: {
    kind: 'refused',
    instead: 'the Sign In With Frequency v1 UI is not served; SIWF_V2_URL names the v2 service',
  },
};

/**
 * RATE_LIMIT_MAX_REQUESTS per RATE_LIMIT_TTL milliseconds (60,000 when unset, as the reference's env files have
 * it) as a whole number per minute, or why it is not one.
 */
function rateLimitPerMinute(max: string | undefined, ttl: string): string | { refused: string } {
  if (max === undefined)
    return { refused: 'RATE_LIMIT_TTL without RATE_LIMIT_MAX_REQUESTS limits nothing; set RATE_LIMIT_PER_MINUTE' };
  if (!/^\d+$/.test(max) || !/^[1-9]\d*$/.test(ttl))
    return { refused: 'RATE_LIMIT_MAX_REQUESTS and RATE_LIMIT_TTL must be whole numbers (RATE_LIMIT_TTL above 0)' };
  const perMinute = (Number(max) * 60_000) / Number(ttl);
  if (!Number.isInteger(perMinute))
    return {
      refused: `${max} requests per ${ttl} ms is not a whole number per minute; set RATE_LIMIT_PER_MINUTE instead`,
    };
  return String(perMinute);
}

/** What the reference's names in an environment come to for one component. */
export interface ReferenceTranslation {
  /** The environment with the renamed settings carried to this component's variables. */
  env: NodeJS.ProcessEnv;
  /** Settings that stop the start: one line each, naming what to use instead. */
  problems: string[];
  /** Settings said once at start and ignored. */
  notices: string[];
}

/**
 * Carries the reference's names found in `env` to the variables of `ours` (a component's variable names), and
 * collects the refusals and notices. A name that is a variable of the service (`service`: its components'
 * variables, the reference's env files being shared by a service's api and worker) is that variable, and a renamed
 * setting is carried only to the variables this component has. A variable of ours set beside the reference's name
 * for it must agree with it.
 */
export function translateReferenceNames(
  env: NodeJS.ProcessEnv,
  ours: ReadonlySet<string>,
  service: ReadonlySet<string> = ours,
): ReferenceTranslation {
  const translated: NodeJS.ProcessEnv = { ...env };
  const problems: string[] = [];
  const notices: string[] = [];
  const given = (name: string) => (env[name] === '' ? undefined : env[name]);
  for (const [name, rule] of Object.entries(REFERENCE_NAMES)) {
    const value = given(name);
    if (value === undefined || ours.has(name) || service.has(name)) continue;
    const setting = `${name} (a setting of the reference gateway)`;
    if (rule.kind === 'refused') problems.push(`${setting}: not supported: ${rule.instead}`);
    else if (rule.kind === 'fixed') {
      if (!rule.accepts.includes(value)) problems.push(`${setting}=${value}: not supported: ${rule.otherwise}`);
    } else if (rule.kind === 'inert') notices.push(`${setting} is ignored: ${rule.why}`);
    else {
      const converted = name.startsWith('RATE_LIMIT_')
        ? rateLimitPerMinute(given('RATE_LIMIT_MAX_REQUESTS'), given('RATE_LIMIT_TTL') ?? '60000')
        : (rule.convert?.(value) ?? value);
      const targets = rule.to.filter((target) => ours.has(target));
      if (targets.length === 0) continue;
      if (typeof converted !== 'string') {
        problems.push(`${setting}=${value}: ${converted.refused}`);
        continue;
      }
      for (const target of targets) {
        const own = given(target);
        if (own !== undefined && own !== converted)
          problems.push(
            `${setting} and ${target} are both set and disagree (${converted} against ${own}): keep ${target}`,
          );
        else translated[target] = converted;
      }
    }
  }
  return { env: translated, problems: [...new Set(problems)], notices };
}

/** One line of the configuration reference per reference name this gateway does not take as it is. */
export function renderReferenceNames(): string {
  const rows = Object.entries(REFERENCE_NAMES)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([name, rule]) => {
      const here =
        rule.kind === 'renamed'
          ? `carried to ${rule.to.map((target) => `\`${target}\``).join(' and ')}${rule.how ? `, ${rule.how}` : ''}`
          : rule.kind === 'fixed'
            ? `accepted as ${rule.accepts.map((value) => `\`${value}\``).join(', ')}; any other value refused: ${rule.otherwise}`
            : rule.kind === 'inert'
              ? `ignored, with a warning at start: ${rule.why}`
              : `refused at start: ${rule.instead}`;
      return `| \`${name}\` | ${here.replaceAll('|', '\\|')} |`;
    });
  return ['| reference name | here |', '|---|---|', ...rows].join('\n');
}
