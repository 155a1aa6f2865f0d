/** An HTTP answer with its JSON body parsed (undefined when empty). */
export interface JsonAnswer {
  status: number;
  // Tests read answers field by field, each checked by an expectation.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
  headers: Headers;
}

/** Sends `body` as JSON (when given) to `${url}${path}` and reads the answer as JSON. */
export async function callJson(url: string, method: string, path: string, body?: unknown): Promise<JsonAnswer> {
  const response = await fetch(`${url}${path}`, {
    method,
    ...(body === undefined ? {} : { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined, headers: response.headers };
}
