import { ChainNotReadyError } from './connection.js';

/**
 * Runs a chain read; a chain that cannot be reached (not connected yet, or the connection dropped during the
 * call) throws ChainNotReadyError, which the caller may retry, whatever the library said.
 */
export async function fromChain<T>(read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (error) {
    if (error instanceof ChainNotReadyError) throw error;
    if (connectionDropped(error)) throw new ChainNotReadyError('the connection dropped', { cause: error });
    throw error;
  }
}

/** What the RPC library throws for a call made while its WebSocket is down, or cut off when it went down. */
function connectionDropped(error: unknown): boolean {
  return error instanceof Error && /disconnected|not connected/i.test(error.message);
}

/** Whether a failure says only that the chain could not be reached (ChainNotReadyError, or a dropped connection). */
export function isChainUnreachable(error: unknown): boolean {
  return error instanceof ChainNotReadyError || connectionDropped(error);
}

/**
 * Whether a failure means the chain is unreachable, and what to tell the caller: the composition root of an
 * HTTP component hands this to its platform (ComponentParts.dependencyFailure), which answers 503 with it.
 */
export function chainUnreachable(error: unknown): { message: string; cause: unknown } | undefined {
  if (!(error instanceof ChainNotReadyError)) return undefined;
  return { message: `The chain is not reachable: ${error.message}`, cause: error.cause ?? error };
}
