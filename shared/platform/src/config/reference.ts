import { z } from 'zod';
import { redactUrl } from './redact.js';
import type { ConfigSpec, Variable } from './variable.js';

export interface VariableReference {
  name: string;
  type: string;
  required: boolean;
  default?: string;
  secret: boolean;
  description: string;
}

type JsonSchema = {
  type?: string | string[];
  enum?: unknown[];
  format?: string;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  anyOf?: JsonSchema[];
  default?: unknown;
};

function typeOf(schema: JsonSchema): string {
  if (schema.anyOf) return schema.anyOf.map(typeOf).join(' or ');
  if (schema.enum) return `one of ${schema.enum.map((v) => `\`${String(v)}\``).join(', ')}`;
  if (schema.format === 'uri') return 'URL';
  const base = Array.isArray(schema.type) ? schema.type.join(' or ') : (schema.type ?? 'string');
  const low = schema.minimum ?? (schema.exclusiveMinimum === undefined ? undefined : schema.exclusiveMinimum + 1);
  const high = schema.maximum !== undefined && schema.maximum < Number.MAX_SAFE_INTEGER ? schema.maximum : undefined;
  if (low !== undefined && high !== undefined) return `${base} ${low}–${high}`;
  if (low !== undefined) return `${base} ≥ ${low}`;
  return base;
}

export function describeVariable(name: string, variable: Variable): VariableReference {
  const unset = variable.schema.safeParse(undefined);
  const json = z.toJSONSchema(variable.schema, { io: 'output', unrepresentable: 'any' }) as JsonSchema;
  const reference: VariableReference = {
    name,
    type: typeOf(json),
    required: !unset.success,
    secret: variable.secret,
    description: variable.description,
  };
  if (unset.success && unset.data !== undefined) {
    // The default as it would be written in the environment (before any transform), else the parsed value.
    const input = (z.toJSONSchema(variable.schema, { io: 'input', unrepresentable: 'any' }) as JsonSchema).default;
    const shown = input ?? unset.data;
    const value =
      typeof shown === 'string'
        ? shown
        : JSON.stringify(shown, (_key, item: unknown) => (typeof item === 'bigint' ? item.toString() : item));
    reference.default = variable.urlWithCredentials ? redactUrl(value) : value;
  }
  return reference;
}

export function describeSpec(spec: ConfigSpec): VariableReference[] {
  return Object.entries(spec).map(([name, variable]) => describeVariable(name, variable));
}

const cell = (text: string) => text.replaceAll('|', '\\|').replaceAll('\n', ' ');

/** A Markdown table of one component's variables. */
export function renderVariableTable(spec: ConfigSpec): string {
  const rows = describeSpec(spec).map((v) => {
    const fallback = v.required
      ? '**required**'
      : v.default === undefined
        ? '—'
        : `\`${v.default === '' ? '""' : v.default}\``;
    const description = v.secret ? `${v.description} *(secret)*` : v.description;
    return `| \`${v.name}\` | ${cell(v.type)} | ${fallback} | ${cell(description)} |`;
  });
  return ['| variable | type | default | meaning |', '|---|---|---|---|', ...rows].join('\n');
}
