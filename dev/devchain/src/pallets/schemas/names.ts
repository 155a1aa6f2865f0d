import { ModuleError } from '../../runtime/errors.js';

const NAMESPACE = { min: 3, max: 30 };
const DESCRIPTOR = { min: 1, max: 28 };
const NAME_MAX = 32;

export interface SchemaName {
  namespace: string;
  descriptor: string | undefined;
}

/**
 * An intent or schema name as the Schemas pallet parses it: ASCII, trimmed and lower-cased, `[a-z0-9-.]`,
 * "namespace.descriptor" (exactly one dot when creating; a bare namespace is allowed for look-ups), each part
 * starting with a letter and not ending with "-".
 */
export function parseSchemaName(bytes: Uint8Array, creating: boolean): SchemaName {
  if (bytes.length > NAME_MAX) throw new ModuleError('Schemas', 'InvalidSchemaNameLength');
  if (bytes.some((b) => b > 0x7f)) throw new ModuleError('Schemas', 'InvalidSchemaNameEncoding');
  const text = new TextDecoder().decode(bytes).trim().toLowerCase();
  if (!/^[a-z0-9.-]*$/.test(text)) throw new ModuleError('Schemas', 'InvalidSchemaNameCharacters');
  const parts = text.split('.');
  if (parts.length > 2 || (creating && parts.length !== 2))
    throw new ModuleError('Schemas', 'InvalidSchemaNameStructure');
  const [namespace, descriptor] = parts as [string, string | undefined];
  const wellFormed = (part: string) => /^[a-z]/.test(part) && !part.endsWith('-');
  if (namespace.length < NAMESPACE.min || namespace.length > NAMESPACE.max)
    throw new ModuleError('Schemas', 'InvalidSchemaNamespaceLength');
  if (!wellFormed(namespace)) throw new ModuleError('Schemas', 'InvalidSchemaNameStructure');
  if (descriptor !== undefined) {
    if (descriptor.length < DESCRIPTOR.min || descriptor.length > DESCRIPTOR.max)
      throw new ModuleError('Schemas', 'InvalidSchemaDescriptorLength');
    if (!wellFormed(descriptor)) throw new ModuleError('Schemas', 'InvalidSchemaNameStructure');
  }
  return { namespace, descriptor };
}
