/** A JSON-RPC error with the code and data a Substrate node would answer. */
export class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: string,
  ) {
    super(message);
    this.name = 'RpcError';
  }
}

export const methodNotFound = (method: string) => new RpcError(-32601, `Method not found: ${method}`);
export const invalidParams = (why: string) => new RpcError(-32602, `Invalid params: ${why}`);
