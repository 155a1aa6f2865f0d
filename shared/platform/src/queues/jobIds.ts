/**
 * The BullMQ job id of an id of ours (a client's reference, a delivery id). BullMQ refuses ids with `:` and ids
 * that read as integers ("0", "42", "-7"), so those are percent-encoded (`%` too, which keeps the mapping
 * one-to-one); any other id is its own job id.
 */
export function bullJobId(id: string): string {
  const escaped = id.replaceAll('%', '%25').replaceAll(':', '%3A');
  if (`${parseInt(escaped, 10)}` !== escaped) return escaped;
  const first = escaped.charCodeAt(0).toString(16).toUpperCase();
  return `%${first}${escaped.slice(1)}`;
}
