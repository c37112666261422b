import type { Token } from './analysis.js';

/** The option grammar of one wrapper program (closed world: anything else is unknown). */
export interface OptionSpec {
  /** Short options without a value, e.g. `'iv0'`. */
  readonly flags?: string;
  /** Short options that take a value, attached (`-n5`) or as the next word (`-n 5`). */
  readonly valued?: string;
  /** Short options whose value may only be attached (`-i{}`), or absent. */
  readonly optionalValued?: string;
  readonly longFlags?: readonly string[];
  /** Long options with a value, `--name=v` or `--name v`. */
  readonly longValued?: readonly string[];
  /** Long options with an optional value, `--name` or `--name=v` only. */
  readonly longOptional?: readonly string[];
  /** Accept `-N` (digits), as `nice -10` does. */
  readonly numericShort?: boolean;
}

export interface OptionScan {
  /** Index of the first operand (the word after the options). */
  readonly next: number;
  /** Options seen, by letter or long name. */
  readonly seen: ReadonlySet<string>;
  readonly problem?: string;
}

/**
 * Scans options starting at `argv[start]` until the first operand, `--`, or
 * a lone `-` (which is an operand). Unknown options and options whose word
 * is not literal produce a `problem`: the caller cannot know what runs.
 */
export function scanOptions(
  argv: readonly Token[],
  start: number,
  spec: OptionSpec,
  program: string,
): OptionScan {
  const seen = new Set<string>();
  let i = start;
  const fail = (what: string): OptionScan => ({ next: i, seen, problem: `${program}: ${what}` });
  while (i < argv.length) {
    const token = argv[i]!;
    if (!token.literal) {
      if (token.text.startsWith('-')) return fail(`option \`${token.text}\` is not a literal word`);
      break;
    }
    const word = token.text;
    if (word === '--') {
      i++;
      break;
    }
    if (!word.startsWith('-') || word === '-') break;
    if (word.startsWith('--')) {
      const eq = word.indexOf('=');
      const name = word.slice(2, eq === -1 ? undefined : eq);
      if (spec.longFlags?.includes(name) && eq === -1) {
        seen.add(name);
        i++;
      } else if (spec.longOptional?.includes(name)) {
        seen.add(name);
        i++;
      } else if (spec.longValued?.includes(name)) {
        seen.add(name);
        i += eq === -1 ? 2 : 1;
        if (i > argv.length) return fail(`option \`${word}\` is missing its value`);
      } else {
        return fail(`unknown option \`${word}\``);
      }
      continue;
    }
    if (spec.numericShort && /^-\d+$/.test(word)) {
      seen.add('numeric');
      i++;
      continue;
    }
    let consumedNext = false;
    for (let k = 1; k < word.length; k++) {
      const letter = word[k]!;
      if (spec.flags?.includes(letter)) {
        seen.add(letter);
      } else if (spec.optionalValued?.includes(letter)) {
        seen.add(letter);
        break;
      } else if (spec.valued?.includes(letter)) {
        seen.add(letter);
        if (k === word.length - 1) {
          if (i + 1 >= argv.length) return fail(`option \`-${letter}\` is missing its value`);
          if (!argv[i + 1]!.literal) return fail(`the value of \`-${letter}\` is not a literal word`);
          consumedNext = true;
        }
        break;
      } else {
        return fail(`unknown option \`-${letter}\` in \`${word}\``);
      }
    }
    i += consumedNext ? 2 : 1;
  }
  return { next: i, seen };
}
