/** An error's message (`ENOSPC: no space left on device, write` for Node system errors), else its string form. */
export function describeCause(error: unknown): string {
  if (error instanceof Error) return error.message;
  return String(error);
}
