import { basename, dirname } from 'node:path';
import { COPIERS, creator, type LineFacts, scriptOperand } from './program-identity.js';
import { touchedPaths } from './touched-paths.js';
import { resolveWriteTarget } from './write-checks.js';

/*
 * What a line makes before it uses it: a program, a script or a link that
 * was not there when the line was judged. Such a line is refused (unless
 * the policy allows dynamic constructs): what runs or what is written was
 * never seen.
 */

/**
 * One refusal per command whose program, or the script a shell or
 * interpreter runs (`printf … > x.sh; bash x.sh`), an earlier part of the
 * line creates, writes or links: what it runs was not there to judge.
 */
export function createdInLine(line: LineFacts): string[] {
  const out: string[] = [];
  line.commands.forEach((command, i) => {
    const by = creator(line, i);
    if (by !== undefined) {
      out.push(
        `cannot judge \`${excerpt(command.program)}\`: \`${excerpt(by)}\` earlier in the line creates or replaces the file it runs`,
      );
      return;
    }
    const script = scriptOperand(command);
    const wrote = script === undefined ? undefined : creator(line, i, SCRIPT_WRITERS, script);
    if (wrote !== undefined) {
      out.push(
        `cannot judge \`${excerpt(command.argv.join(' '))}\`: \`${excerpt(wrote)}\` earlier in the line writes the script it runs`,
      );
    }
  });
  return out;
}

/**
 * One refusal per redirection whose target an earlier `ln` in the line
 * links (`ln -sf $PWD/.npmrc /tmp/x; echo … > /tmp/x`): the write goes
 * wherever the new link points, which was not there to judge.
 */
export function linkedInLine(line: LineFacts): string[] {
  const out: string[] = [];
  for (const r of line.redirects) {
    if (!r.literal || line.dirs === null) continue;
    const start = r.range?.[0] ?? Number.POSITIVE_INFINITY;
    const targets = line.dirs.map((dir) => resolveWriteTarget(r, dir).lexical);
    const by = line.commands.find((c, j) => {
      if (basename(c.program) !== 'ln' || (c.range?.[0] ?? 0) >= start) return false;
      const paths = touchedPaths(line.words[j] ?? [], line.dirs).map((t) => t.path);
      const last = paths.at(-1);
      return targets.some((t) => paths.includes(t) || (last !== undefined && dirname(t) === last));
    });
    if (by !== undefined) {
      out.push(
        `cannot judge \`${r.operator} ${excerpt(r.target)}\`: \`${excerpt(by.argv.join(' '))}\` earlier in the line links the file it writes`,
      );
    }
  }
  return out;
}

/** Programs that write a file named in their arguments: a script they write is not there to judge. */
const SCRIPT_WRITERS: ReadonlySet<string> = new Set([
  ...COPIERS,
  'curl',
  'wget',
  'touch',
  'sed',
  'perl',
  'printf',
  'echo',
]);

function excerpt(text: string): string {
  const flat = text.replace(/\s+/g, ' ');
  return flat.length > 80 ? `${flat.slice(0, 77)}...` : flat;
}
