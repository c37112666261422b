/**
 * Fitting command output into a model's character budget.
 *
 * A tool result reaches the model as JSON text, so a character costs what it
 * costs once JSON-escaped: a newline, a quote or a backslash counts 2, another
 * control character 6. Budgets here are counted that way, which is what lets
 * a tool promise that its whole result text stays within the budget.
 */

/** The default budget of one tool result, near what peers use (Claude Code cuts tool output at 30,000 characters). */
export const DEFAULT_OUTPUT_CHARS = 30_000;
/** Default ceiling of a call's `maxOutputChars` when the policy sets none. */
export const DEFAULT_MAX_OUTPUT_CHARS = 200_000;
/** The smallest budget a call may ask for: room for a marker and some output. */
export const MIN_OUTPUT_CHARS = 1_000;

/** Budgets for tool output, in JSON-escaped characters. */
export interface OutputBudgetLimits {
  /** Used when a call names none. Clamped to `max`. */
  readonly defaultChars: number;
  /** The ceiling of a call's `maxOutputChars`. */
  readonly maxChars: number;
}

export const DEFAULT_OUTPUT_BUDGET: OutputBudgetLimits = {
  defaultChars: DEFAULT_OUTPUT_CHARS,
  maxChars: DEFAULT_MAX_OUTPUT_CHARS,
};

/** The budgets under a ceiling (a policy's `limits.maxOutputChars`); the defaults without one. */
export function outputBudgetFor(ceiling: number | undefined): OutputBudgetLimits {
  if (ceiling === undefined) return DEFAULT_OUTPUT_BUDGET;
  return { defaultChars: Math.min(DEFAULT_OUTPUT_CHARS, ceiling), maxChars: ceiling };
}

/** What {@link fitOutput} kept. */
export interface FittedOutput {
  /** The text to return: whole, or cut with a marker in it. */
  readonly text: string;
  /** Characters (UTF-16 code units) of the input left out; 0 when it fit. */
  readonly omittedChars: number;
}

/** The JSON-escaped length of one UTF-16 code unit (a lone surrogate is escaped as `\uXXXX`). */
function unitCost(code: number): number {
  if (code === 0x22 || code === 0x5c) return 2;
  if (code < 0x20)
    return code === 0x08 || code === 0x09 || code === 0x0a || code === 0x0c || code === 0x0d ? 2 : 6;
  return 1;
}

/** The JSON-escaped length of `text` without the quotes: what it adds to a JSON result. */
export function jsonCost(text: string): number {
  let cost = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code >= 0xd800 && code <= 0xdfff) {
      const pair = code <= 0xdbff && i + 1 < text.length && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00;
      if (pair) {
        cost += 2;
        i++;
      } else {
        cost += 6;
      }
    } else {
      cost += unitCost(code);
    }
  }
  return cost;
}

/** How many code units from the start of `text` fit in `budget`, never splitting a surrogate pair. */
function headLength(text: string, budget: number): number {
  let cost = 0;
  let i = 0;
  while (i < text.length) {
    const code = text.charCodeAt(i);
    const pair =
      code >= 0xd800 && code <= 0xdbff && i + 1 < text.length && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00;
    const step = pair ? 2 : 1;
    const c = pair ? 2 : code >= 0xd800 && code <= 0xdfff ? 6 : unitCost(code);
    if (cost + c > budget) break;
    cost += c;
    i += step;
  }
  return i;
}

/** How many code units from the end of `text` fit in `budget`, never splitting a surrogate pair. */
function tailLength(text: string, budget: number): number {
  let cost = 0;
  let i = text.length;
  while (i > 0) {
    const code = text.charCodeAt(i - 1);
    const pair = (code & 0xfc00) === 0xdc00 && i >= 2 && (text.charCodeAt(i - 2) & 0xfc00) === 0xd800;
    const step = pair ? 2 : 1;
    const c = pair ? 2 : code >= 0xd800 && code <= 0xdfff ? 6 : unitCost(code);
    if (cost + c > budget) break;
    cost += c;
    i -= step;
  }
  return text.length - i;
}

/** How far (a fraction of the kept part) a cut may move back to fall on a line boundary. */
const LINE_SLACK = 0.2;

/** `end`, moved back to just after a newline when one is near; never below the start. */
function toLineEnd(text: string, end: number): number {
  const newline = text.lastIndexOf('\n', end - 1);
  return newline >= 0 && end - (newline + 1) <= end * LINE_SLACK ? newline + 1 : end;
}

/** `start`, moved forward to just after a newline when one is near; never past `text.length`, never before `floor`. */
function toLineStart(text: string, start: number, floor: number): number {
  if (start <= floor || (start > 0 && text.charCodeAt(start - 1) === 0x0a)) return Math.max(start, floor);
  const newline = text.indexOf('\n', start);
  return newline >= 0 && newline + 1 - start <= (text.length - start) * LINE_SLACK ? newline + 1 : start;
}

/** Where the text came from, so the marker can say how to read what it left out. */
export interface OutputOrigin {
  /** The byte offset in the command's output where `text` starts. */
  readonly startByte: number;
}

/**
 * Keeps `text` whole if it costs at most `budget`; otherwise keeps its
 * beginning and its end (half the room each) around a marker that says how
 * many characters and which bytes were left out, and how to read them
 * (`terminal_output` with `fromByte`). The result costs at most `budget`.
 * Byte offsets in the marker are exact for valid UTF-8; an invalid byte
 * shown as U+FFFD counts as the three bytes of that character.
 */
export function fitOutput(text: string, budget: number, origin: OutputOrigin): FittedOutput {
  if (jsonCost(text) <= budget) return { text, omittedChars: 0 };
  // Every number in the marker is at most its value here, so the real marker is no longer.
  const endByte = origin.startByte + Buffer.byteLength(text);
  const room = Math.max(0, budget - jsonCost(middleMarker(text.length, endByte, endByte)));
  const head = toLineEnd(text, headLength(text, Math.floor(room / 2)));
  const tailStart =
    text.length - Math.min(tailLength(text, room - jsonCost(text.slice(0, head))), text.length - head);
  const tail = text.length - toLineStart(text, tailStart, head);
  const from = origin.startByte + Buffer.byteLength(text.slice(0, head));
  const to = from + Buffer.byteLength(text.slice(head, text.length - tail));
  const omitted = text.length - head - tail;
  return {
    text: text.slice(0, head) + middleMarker(omitted, from, to) + text.slice(text.length - tail),
    omittedChars: omitted,
  };
}

/**
 * Keeps the beginning of `text` within `budget` and says where the rest
 * starts: for reading a long output page by page from a byte offset.
 */
export function fitOutputFromStart(text: string, budget: number, origin: OutputOrigin): FittedOutput {
  if (jsonCost(text) <= budget) return { text, omittedChars: 0 };
  const endByte = origin.startByte + Buffer.byteLength(text);
  const head = headLength(text, Math.max(0, budget - jsonCost(pageMarker(text.length, endByte))));
  const next = origin.startByte + Buffer.byteLength(text.slice(0, head));
  return {
    text: text.slice(0, head) + pageMarker(text.length - head, next),
    omittedChars: text.length - head,
  };
}

function count(n: number): string {
  return n.toLocaleString('en-US');
}

function middleMarker(omittedChars: number, fromByte: number, toByte: number): string {
  return (
    `\n[termgate: ${count(omittedChars)} characters omitted here (output bytes ${fromByte} to ${toByte}). ` +
    `Read them with terminal_output and "fromByte": ${fromByte}, or rerun the command through grep, head or tail.]\n`
  );
}

function pageMarker(restChars: number, nextByte: number): string {
  return `\n[termgate: ${count(restChars)} more characters. Continue with terminal_output and "fromByte": ${nextByte}.]\n`;
}

/** The budget of one call: the call's own `maxOutputChars`, else the default, never above the ceiling. */
export function callBudget(requested: number | undefined, limits: OutputBudgetLimits): number {
  return Math.min(requested ?? limits.defaultChars, limits.maxChars);
}
