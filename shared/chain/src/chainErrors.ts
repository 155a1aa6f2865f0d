import { ChainNotReadyError } from './connection.js';
import { serviceUnavailable } from '@frequency-gateway/platform';

/** Runs a chain read; a chain that is not reachable becomes 503 (the caller may retry), not 500. */
export async function fromChain<T>(read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (error) {
    if (error instanceof ChainNotReadyError) throw serviceUnavailable(`The chain is not reachable: ${error.message}`);
    // The connection dropped during the call.
    if (error instanceof Error && /disconnected|not connected/i.test(error.message))
      throw serviceUnavailable('The chain is not reachable: the connection dropped');
    throw error;
  }
}
