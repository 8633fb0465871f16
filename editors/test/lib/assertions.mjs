// Scope assertions written in the fixtures in Sublime Text's syntax-test format, so that the
// same files also run as Sublime syntax tests:
//
//   copy(A[i, j], A_s);
//   // <- support.function.tile.tl            column of the `//`
//   //     ^ punctuation.section.brackets.begin.tl
//
// A selector is a space-separated list of scopes that must appear in this order (outermost
// first) in the token's scope stack, each matching a whole scope or a dot-separated prefix
// of one; ` - X` parts exclude stacks that match X.

const ASSERTION = /^(\s*)\/\/\s*(\^+|<-)\s+(.+?)\s*$/;

function parseSelector(text) {
  if (/[|,&()]/.test(text)) throw new Error(`unsupported selector syntax: '${text}'`);
  const [include, ...exclude] = text.split(/\s+-\s+/).map((part) => part.trim().split(/\s+/));
  return { text, include, exclude };
}

function scopeMatches(pattern, scope) {
  return scope === pattern || scope.startsWith(`${pattern}.`);
}

function pathMatches(path, scopes) {
  let next = 0;
  for (const pattern of path) {
    while (next < scopes.length && !scopeMatches(pattern, scopes[next])) next += 1;
    if (next === scopes.length) return false;
    next += 1;
  }
  return true;
}

export function selectorMatches(selector, scopes) {
  return pathMatches(selector.include, scopes) && !selector.exclude.some((path) => pathMatches(path, scopes));
}

// The class a selector pins down, for engines that only know classes: the innermost scope
// of a selector without exclusions.
export function selectorClass(selector) {
  return selector.exclude.length === 0 ? selector.include.at(-1) : null;
}

// Returns [{ line, firstCol, lastCol, selector, at }] for the tested lines (0-based).
export function parseAssertions(text) {
  const result = [];
  let tested = -1;
  text.split('\n').forEach((lineText, lineNo) => {
    const m = ASSERTION.exec(lineText);
    if (m === null) {
      tested = lineNo;
      return;
    }
    if (tested < 0) throw new Error(`line ${lineNo + 1}: assertion before any tested line`);
    const [, indent, marks, selectorText] = m;
    const firstCol = marks === '<-' ? indent.length : lineText.indexOf('^');
    const lastCol = marks === '<-' ? firstCol : firstCol + marks.length - 1;
    result.push({ line: tested, firstCol, lastCol, selector: parseSelector(selectorText), at: lineNo + 1 });
  });
  return result;
}
