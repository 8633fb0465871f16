// An independent lexer for .tl text, written from the lexer rules of grammar/TileLang.g4.
// The tests use it to know what each piece of a file is (comment, string, number, word)
// without trusting the editor grammar under test.

// Alternatives in the order ANTLR's longest match would pick them for the same start:
// 0x1F must not lex as INT '0' and IDENT 'x1F', 1.5e3 not as INT '1' and FLOAT '.5e3'.
const TOKEN = new RegExp(
  [
    String.raw`(?<blockComment>\/\*[\s\S]*?(?:\*\/|$))`,
    String.raw`(?<lineComment>\/\/[^\r\n]*)`,
    String.raw`(?<string>"(?:[^"\\\r\n]|\\.)*"?)`,
    String.raw`(?<hex>0x[0-9a-fA-F_]+)`,
    String.raw`(?<float>[0-9]+\.[0-9]*(?:[eE][+-]?[0-9]+)?|\.[0-9]+(?:[eE][+-]?[0-9]+)?|[0-9]+[eE][+-]?[0-9]+)`,
    String.raw`(?<decimal>[0-9][0-9_]*)`,
    String.raw`(?<ident>[A-Za-z_][A-Za-z0-9_]*)`,
    String.raw`(?<space>\s+)`,
    String.raw`(?<punct>[\s\S])`,
  ].join('|'),
  'y',
);

// Splits a token that may span lines into per-line pieces with 0-based line and column.
function* pieces(text, offset, lineStarts) {
  let line = lineStarts.findLastIndex((start) => start <= offset);
  let col = offset - lineStarts[line];
  let rest = text;
  for (;;) {
    const nl = rest.indexOf('\n');
    if (nl < 0) {
      yield { line, col, text: rest };
      return;
    }
    yield { line, col, text: rest.slice(0, nl) };
    rest = rest.slice(nl + 1);
    line += 1;
    col = 0;
  }
}

// Returns tokens { kind, text, line, col, pieces } where kind is one of blockComment,
// lineComment, string, hex, float, decimal, ident, punct; whitespace is dropped.
export function lex(text) {
  const lineStarts = [0];
  for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) lineStarts.push(i + 1);
  const tokens = [];
  TOKEN.lastIndex = 0;
  while (TOKEN.lastIndex < text.length) {
    const offset = TOKEN.lastIndex;
    const m = TOKEN.exec(text);
    const kind = Object.keys(m.groups).find((k) => m.groups[k] !== undefined);
    if (kind === 'space') continue;
    const parts = [...pieces(m[0], offset, lineStarts)];
    tokens.push({ kind, text: m[0], line: parts[0].line, col: parts[0].col, pieces: parts });
  }
  return tokens;
}
