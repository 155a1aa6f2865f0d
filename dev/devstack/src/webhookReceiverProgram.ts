import { readFile } from 'node:fs/promises';
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Where the program is told what to do: the port (8080 by default), the address ('' every one), the store file. */
const LAUNCH = `
const receiver = await startWebhookReceiver({
  port: Number(process.env.PORT ?? '8080'),
  host: process.env.HOST ?? '',
  storeFile: process.env.RECEIVED_FILE,
});
process.stdout.write(\`webhook receiver listening on \${receiver.port}\\n\`);
// Nothing to finish: stop at once when the container or the Pod is stopped.
process.on('SIGTERM', () => process.exit(0));
`;

/**
 * `startWebhookReceiver` as a program of one JavaScript file (ES module, run with `node FILE.mjs`), for where the
 * test process is out of reach of the components: a container of the gateway image on a run's Docker network, a
 * Pod in the cluster. The same module the tests run in-process, its types stripped; PORT, HOST and RECEIVED_FILE
 * (see `WebhookReceiverOptions.storeFile`) say where it listens and keeps what it got. Tests read what it got at
 * `GET /received`.
 */
export async function webhookReceiverProgram(): Promise<string> {
  // From the sources (the tests), the TypeScript module beside this one; built, the JavaScript one.
  const extension = extname(fileURLToPath(import.meta.url));
  const module = await readFile(new URL(`./webhookReceiver${extension}`, import.meta.url), 'utf8');
  if (extension !== '.ts') return `${module}\n${LAUNCH}`;
  const { default: ts } = await import('typescript');
  const { outputText } = ts.transpileModule(module, {
    compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, verbatimModuleSyntax: true },
  });
  return `${outputText}\n${LAUNCH}`;
}
