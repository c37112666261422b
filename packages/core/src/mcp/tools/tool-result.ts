/** What a tool handler produced, before the era decides the wire shape. */
export interface ToolOutcome {
  readonly structuredContent?: Readonly<Record<string, unknown>>;
  /** Extra plain-text blocks after the JSON block (or the only text, for errors). */
  readonly notes?: readonly string[];
  readonly isError?: boolean;
}

/** A `CallToolResult` body without the era's envelope fields. */
export function toCallToolResult(outcome: ToolOutcome): Record<string, unknown> {
  const content: { type: 'text'; text: string }[] = [];
  if (outcome.structuredContent !== undefined) {
    content.push({ type: 'text', text: JSON.stringify(outcome.structuredContent) });
  }
  for (const note of outcome.notes ?? []) content.push({ type: 'text', text: note });
  const result: Record<string, unknown> = { content };
  if (outcome.structuredContent !== undefined) result.structuredContent = outcome.structuredContent;
  if (outcome.isError) result.isError = true;
  return result;
}

export function toolError(message: string): ToolOutcome {
  return { isError: true, notes: [message] };
}
