import { startIntakeRelay, type IntakeRelay } from '@frequency-gateway/platform';
import { contentRequests } from '../../requests.js';

/**
 * The intake stage: the requests the api accepted wait in the `content` intake stream; the relay moves each
 * into its queue (requestQueue for content, publishQueue for batch files and on-chain content) with the job
 * options the api gave it (src/queues.ts), so every replica shares the work and a crash loses nothing.
 */
export function startIntake(runtime: Parameters<typeof startIntakeRelay>[0]): IntakeRelay {
  return startIntakeRelay(runtime, contentRequests.intake);
}
