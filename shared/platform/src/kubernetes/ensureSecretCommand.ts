// `gateway ensure-secret …` (bin/gateway.js): runs on import, with the arguments after the command's name.
import { runEnsureSecretCommand } from './ensureSecret.js';

process.exitCode = await runEnsureSecretCommand(process.argv.slice(2));
