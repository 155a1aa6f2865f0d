// A process the dev runner keeps warm for the next reload (run with `node --import tsx --conditions=source`): it
// loads the third-party packages the components import (most of a component's start-up time), then waits over IPC
// to become one component.
//   1. {packages}: loads them (one that fails to load is left to the component), answers {warm}.
//   2. {env, main, role, load}: takes the component's environment, loads its service code (`load`, what main.ts
//      imports) while the old process still serves, and answers {loaded} or {failed, error}: a save that does
//      not compile or whose modules do not link fails here, and the old process keeps running.
//   3. {start} (once the old process has stopped and its port is free): runs main.ts as `main.ts <role>`.
// It never loads the gateway's own sources before step 2, so every reload runs the files as they are on disk.
import { pathToFileURL } from 'node:url';

type Message =
  | { type: 'packages'; packages: string[] }
  | { type: 'assign'; env: Record<string, string>; main: string; role: string; load: string[] }
  | { type: 'start' };

const send = (message: object) => process.send?.(message);
let assigned: Extract<Message, { type: 'assign' }> | undefined;

process.on('message', (message: Message) => {
  if (message.type === 'packages') void warm(message.packages);
  else if (message.type === 'assign') void load(message);
  else if (message.type === 'start') void start();
});

async function warm(packages: string[]): Promise<void> {
  for (const specifier of packages) await import(specifier).catch(() => undefined);
  send({ type: 'warm' });
}

async function load(assignment: Extract<Message, { type: 'assign' }>): Promise<void> {
  assigned = assignment;
  Object.assign(process.env, assignment.env);
  process.argv = [process.argv[0]!, assignment.main, assignment.role];
  try {
    for (const file of assignment.load) await import(pathToFileURL(file).href);
    send({ type: 'loaded' });
  } catch (error) {
    send({ type: 'failed', error: error instanceof Error ? (error.stack ?? error.message) : String(error) });
  }
}

async function start(): Promise<void> {
  // The IPC channel would keep the process alive after the component's own shutdown.
  process.disconnect();
  await import(pathToFileURL(assigned!.main).href);
}
