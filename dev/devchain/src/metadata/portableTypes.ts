/** The scale-info (PortableRegistry) type shapes, as JSON that polkadot-js' Metadata accepts. */
export interface SiField {
  name: string | null;
  type: number;
  typeName: string | null;
  docs: string[];
}

export interface SiVariant {
  name: string;
  fields: SiField[];
  index: number;
  docs: string[];
}

export type SiDef =
  | { Composite: { fields: SiField[] } }
  | { Variant: { variants: SiVariant[] } }
  | { Sequence: { type: number } }
  | { Array: { len: number; type: number } }
  | { Tuple: number[] }
  | { Primitive: string }
  | { Compact: { type: number } };

export interface SiParam {
  name: string;
  type: number | null;
}

export interface SiType {
  id: number;
  type: { path: string[]; params: SiParam[]; def: SiDef; docs: string[] };
}

export const field = (type: number, name: string | null = null, typeName: string | null = null): SiField => ({
  name,
  type,
  typeName,
  docs: [],
});

export const variant = (name: string, index: number, fields: SiField[] = []): SiVariant => ({
  name,
  index,
  fields,
  docs: [],
});
