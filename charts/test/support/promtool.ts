// promtool (Prometheus's rules checker and unit tester, built by tools/install-prometheus) for the chart tests.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { findTool } from '@frequency-gateway/devstack';

const run = promisify(execFile);
const promtool = findTool('promtool', 'PROMTOOL_BIN');

/** promtool, or a failure naming how to get it: a missing tool never skips a test, under CI or not. */
function requirePromtool(): string {
  if (!promtool)
    throw new Error('missing: promtool — build it with `make tools` (tools/install-prometheus) or set PROMTOOL_BIN');
  return promtool;
}

/** promtool's verdict: its output whether it passed or failed, and whether it passed. */
export async function runPromtool(args: string[], cwd: string): Promise<{ ok: boolean; output: string }> {
  try {
    const { stdout, stderr } = await run(requirePromtool(), args, { cwd, maxBuffer: 8 * 1024 * 1024 });
    return { ok: true, output: stdout + stderr };
  } catch (error) {
    const failed = error as { stdout?: string; stderr?: string; message: string };
    return { ok: false, output: `${failed.stdout ?? ''}${failed.stderr ?? ''}` || failed.message };
  }
}
