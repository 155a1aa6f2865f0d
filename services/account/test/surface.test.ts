import { readFileSync } from 'node:fs';
import { useAccountStack } from './support/stack.js';

/** Every operation of the reference account API: method, path and operationId, as clients call them. */
const REFERENCE: { method: string; path: string; operationId: string }[] = JSON.parse(
  readFileSync(new URL('./referenceOperations.json', import.meta.url), 'utf8'),
);

type Document = { paths: Record<string, Record<string, { operationId: string }>> };

const stack = useAccountStack();

const operationsOf = (document: Document) =>
  Object.entries(document.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, operation]) => ({
      method: method.toUpperCase(),
      path,
      operationId: operation.operationId,
    })),
  );

test('the OpenAPI document has every path, method and operationId of the reference account API', async () => {
  const document = (await stack.call('GET', '/docs/swagger.json')).body as unknown as Document;
  const ours = new Set(operationsOf(document).map((op) => `${op.method} ${op.path} ${op.operationId}`));
  const missing = REFERENCE.map((op) => `${op.method} ${op.path} ${op.operationId}`).filter((op) => !ours.has(op));
  expect(REFERENCE.length).toBe(24);
  expect(missing).toEqual([]);
});

test('read-only (no provider key): every write route answers 403 before reading its input', async () => {
  const readOnly = await stack.startApi({ PROVIDER_ACCOUNT_SEED_PHRASE: '' });
  const document = (await (await fetch(`${readOnly.url}/docs/swagger.json`)).json()) as Document;
  // Signing in a registered user writes nothing and stays open; its sign-up branch is refused (signUp.test.ts).
  const writes = operationsOf(document).filter(
    (op) => op.method === 'POST' && !op.path.startsWith('/v2/accounts/siwf'),
  );
  expect(writes.map((op) => op.operationId).sort()).toEqual(
    REFERENCE.filter((op) => op.method === 'POST' && !op.path.startsWith('/v2/accounts/siwf'))
      .map((op) => op.operationId)
      .sort(),
  );
  for (const { path } of writes) {
    const url = `${readOnly.url}${path.replace('{accountId}', '5GrwvaEF5zXb26Fz9rcQpDWS57CtERHpNehXCPcNoHGKutQY')}`;
    const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    const body = (await response.json()) as { message: unknown };
    expect([path, response.status, String(body.message)]).toEqual([path, 403, expect.stringMatching(/read-only/)]);
  }
}, 60_000);
