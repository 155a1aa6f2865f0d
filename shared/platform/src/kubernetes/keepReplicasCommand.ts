// `gateway keep-replicas …` (bin/gateway.js): runs on import, with the arguments after the command's name.
import { runKeepReplicasCommand } from './keepReplicas.js';

process.exitCode = await runKeepReplicasCommand(process.argv.slice(2));
