// The highlight classes: the scopes that the tests compare across engines. A TextMate or
// Sublime token belongs to the innermost class in its scope stack; a Vim character to the
// class of its syntax group. Scopes that are not classes here (meta.*, punctuation.*) are
// checked on the TextMate grammar only, through the fixtures' assertions.

import { KEYWORD_CLASSES, NAME_POSITIONS } from '../../tools/keyword-classes.mjs';

const LITERAL_CLASSES = {
  'comment.line.double-slash.tl': 'tlLineComment',
  'comment.block.tl': 'tlBlockComment',
  'string.quoted.double.tl': 'tlString',
  'constant.character.escape.tl': 'tlEscape',
  'constant.numeric.integer.decimal.tl': 'tlInteger',
  'constant.numeric.integer.hexadecimal.tl': 'tlHex',
  'constant.numeric.float.tl': 'tlFloat',
  'entity.name.function.kernel.tl': 'tlKernelName',
  'variable.other.constant.tl': 'tlConstName',
};

// Highlighted by the TextMate and Sublime grammars only: Vim leaves operators and
// parameter names in the default colour, as its C-family syntaxes do.
const STRUCTURE_CLASSES = [
  'variable.parameter.tl',
  'storage.type.function.arrow.tl',
  'keyword.operator.assignment.tl',
  'keyword.operator.assignment.compound.tl',
  'keyword.operator.arithmetic.tl',
  'keyword.operator.comparison.tl',
  'keyword.operator.logical.tl',
  'keyword.operator.bitwise.tl',
  'keyword.operator.bitwise.shift.tl',
  'keyword.operator.slice.tl',
];

// scope -> the Vim syntax groups that show it (none: Vim does not highlight it)
export const HIGHLIGHT_CLASSES = new Map([
  ...KEYWORD_CLASSES.map((cls) => [cls.scope, [cls.vim]]),
  ...Object.entries(LITERAL_CLASSES).map(([scope, group]) => [scope, [group]]),
  ...STRUCTURE_CLASSES.map((scope) => [scope, []]),
]);
for (const pos of NAME_POSITIONS) {
  if (pos.vim !== null) HIGHLIGHT_CLASSES.get(pos.scope).push(pos.vim);
}

export const NUMBER_CLASS = {
  hex: 'constant.numeric.integer.hexadecimal.tl',
  float: 'constant.numeric.float.tl',
  decimal: 'constant.numeric.integer.decimal.tl',
};
export const COMMENT_CLASS = {
  lineComment: 'comment.line.double-slash.tl',
  blockComment: 'comment.block.tl',
};
export const STRING_CLASS = 'string.quoted.double.tl';
export const ESCAPE_CLASS = 'constant.character.escape.tl';
export const KERNEL_NAME_CLASS = 'entity.name.function.kernel.tl';
export const CONST_NAME_CLASS = 'variable.other.constant.tl';
export const PARAMETER_CLASS = 'variable.parameter.tl';

// The innermost class of a TextMate/Sublime scope stack (outermost scope first).
export function innermostClass(scopes) {
  for (let i = scopes.length - 1; i >= 0; i -= 1) {
    if (HIGHLIGHT_CLASSES.has(scopes[i])) return scopes[i];
  }
  return null;
}
