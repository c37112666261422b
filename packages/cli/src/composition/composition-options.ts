/** How one process's graph differs: `serve` or `acp-proxy`, and the seams tests use. */
export interface CompositionOptions {
  /**
   * Free exited terminals when the limit is reached: `serve` (MCP clients
   * may leave exited terminals unreleased); ACP agents release theirs.
   */
  readonly reclaimExited: boolean;
  /** The judge worker script; default the one built next to `@termgate/policy` (tests running sources point at it). */
  readonly judgeWorkerPath?: string;
}
