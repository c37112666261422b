/**
 * Error codes the ACP adapter sends. ACP v1's `ErrorCode` lists the JSON-RPC
 * codes plus -32800, -32000 and -32002; it defines none for a policy refusal,
 * so termgate uses one of JSON-RPC's implementation-defined server codes.
 */
export const AcpErrorCode = {
  InvalidParams: -32602,
  InternalError: -32603,
  MethodNotFound: -32601,
  /** ACP "Resource not found": an unknown or released terminal (`data.terminalId`), or a missing program. */
  ResourceNotFound: -32002,
  /** ACP "Request cancelled": the answer to a `$/cancel_request`ed wait. */
  RequestCancelled: -32800,
  /**
   * termgate: the policy refused the verb; nothing happened. `data` is
   * `{ verb, reason, ruleIds }` (plus `terminalId` for verbs on a terminal).
   */
  PolicyDenied: -32010,
} as const;
