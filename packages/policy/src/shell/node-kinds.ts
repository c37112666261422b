/**
 * The allowlist of tree-sitter-bash node kinds the walk knows. Any other
 * kind is refused as unparseable: a construct the grammar gains later is
 * never walked past unjudged. (Kinds the walk handles one by one, such as
 * `command` or `heredoc_redirect`, are in `shell-walk.ts`.)
 */

/** Node kinds whose named children are walked as they are. */
export const STRUCTURAL = new Set([
  'program',
  'list',
  'pipeline',
  'subshell',
  'compound_statement',
  'negated_command',
  'do_group',
  'if_statement',
  'elif_clause',
  'else_clause',
  'while_statement',
  'for_statement',
  'case_statement',
  'case_item',
  'binary_expression',
  'unary_expression',
  'parenthesized_expression',
  'ternary_expression',
  'postfix_expression',
  'string',
  'concatenation',
  'translated_string',
  'file_redirect',
  'herestring_redirect',
  'command_name',
  'simple_expansion',
]);

/** Node kinds with nothing executable inside. */
export const LEAVES = new Set([
  'word',
  'number',
  'string_content',
  'raw_string',
  'ansi_c_string',
  'variable_name',
  'special_variable_name',
  'heredoc_start',
  'heredoc_end',
  'heredoc_content',
  'file_descriptor',
  'extglob_pattern',
  'regex',
  'test_operator',
  'comment',
  'brace_expression',
]);

/** `via` labels for the constructs that introduce one. */
export const VIA: Readonly<Record<string, string>> = {
  pipeline: 'pipeline',
  subshell: 'subshell',
  command_substitution: 'command_substitution',
  process_substitution: 'process_substitution',
};
