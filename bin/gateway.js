#!/usr/bin/env node
// The image's entrypoint: `gateway <command> [arguments]` runs one component of the gateway in this process.
// Plain JavaScript so that it needs no build. Each command is a package export: Node's conditions pick the
// code, dist/ by default, the TypeScript sources with `node --conditions=source --import tsx bin/gateway.js`.
const COMMANDS = {
  account: { entry: '@frequency-gateway/account/main', arguments: 'api|worker|migrate' },
  'content-publishing': { entry: '@frequency-gateway/content-publishing/main', arguments: 'api|worker|migrate' },
  'content-watcher': { entry: '@frequency-gateway/content-watcher/main', arguments: 'api|worker|migrate' },
  devchain: { entry: '@frequency-gateway/devchain/cli', arguments: '[--host 0.0.0.0] [--port 9944] … (--help)' },
  // A Helm hook (or plain Job) that makes generated credentials once, in the cluster (see charts/frequency-gateway).
  'ensure-secret': {
    entry: '@frequency-gateway/platform/ensure-secret',
    arguments: '--name NAME --key KEY[=PREFIX] … [--namespace NS] [--label K=V …] (--help)',
  },
  // A Helm pre-upgrade hook: an autoscaler taking over a Deployment's replicas must not reset them to 1.
  'keep-replicas': {
    entry: '@frequency-gateway/platform/keep-replicas',
    arguments: '--deployment NAME … [--field-manager NAME] [--namespace NS] (--help)',
  },
};

const usage = () =>
  `usage: gateway <command> [arguments]\n${Object.entries(COMMANDS)
    .map(([name, command]) => `  ${name} ${command.arguments}\n`)
    .join('')}`;

const name = process.argv[2];
if (name === '--help' || name === '-h' || name === 'help') {
  process.stdout.write(usage());
  process.exit(0);
}
const command = Object.hasOwn(COMMANDS, name ?? '') ? COMMANDS[name] : undefined;
if (!command) {
  process.stderr.write(`${name === undefined ? '' : `gateway: unknown command ${name}\n`}${usage()}`);
  process.exit(2);
}
// The component reads its own arguments from process.argv: without the command name it sees only those.
process.argv.splice(2, 1);
await import(command.entry);
