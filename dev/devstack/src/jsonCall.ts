/** An HTTP answer with its JSON body parsed (undefined when empty, the text itself when it is not JSON). */
export interface JsonAnswer {
  status: number;
  // Tests read answers field by field, each checked by an expectation.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
  headers: Headers;
}

export interface JsonCallOptions {
  /** More request headers (e.g. an authorization). */
  headers?: Record<string, string>;
  /** An answer not in by then fails the call (default 30 s): a server that takes no answer never hangs a test. */
  timeoutMs?: number;
}

/** The tests' one JSON call: sends `body` as JSON (when given) to `${url}${path}` and reads the answer. */
export async function callJson(
  url: string,
  method: string,
  path: string,
  body?: unknown,
  options: JsonCallOptions = {},
): Promise<JsonAnswer> {
  const headers = { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...options.headers };
  const response = await fetch(`${url}${path}`, {
    method,
    headers,
    signal: AbortSignal.timeout(options.timeoutMs ?? 30_000),
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return jsonAnswerOf(response);
}

/** Reads an answer the caller fetched itself (a multipart upload, a raw body) as `callJson` does. */
export async function jsonAnswerOf(response: Response): Promise<JsonAnswer> {
  const text = await response.text();
  let body: unknown = undefined;
  if (text) {
    try {
      body = JSON.parse(text);
    } catch {
      body = text;
    }
  }
  return { status: response.status, body, headers: response.headers };
}
