// What every engine must show for each piece of a .tl file, derived from the independent
// lexer and the g4's keyword classes: comments, strings, escapes and numbers keep their
// literal class on every character; each keyword of the g4 gets its class; soft keywords
// get one only in keyword position; any other word is never coloured as a keyword.

import { lex } from './tl-lexer.mjs';
import {
  COMMENT_CLASS,
  CONST_NAME_CLASS,
  ESCAPE_CLASS,
  KERNEL_NAME_CLASS,
  NUMBER_CLASS,
  PARAMETER_CLASS,
  STRING_CLASS,
} from './highlight-classes.mjs';

// Where a soft keyword (a literal of the g4's `name` rule) is a keyword. A soft keyword the
// g4 gains must be added here and to the grammars' soft-keyword rules.
const SOFT_KEYWORD_POSITIONS = {
  grid: { scope: 'keyword.other.tl', when: (prev, next) => next?.text === '(' },
  threads: { scope: 'keyword.other.tl', when: (prev, next) => next?.text === '(' },
  dtype: { scope: 'storage.type.primitive.tl', when: (prev, next) => prev?.text === ':' || next?.text === '[' },
};

// Where the name positions of the g4 (kernelName, argName) are, in the token stream.
const NAME_POSITION_CONTEXT = {
  kernel_name: (prev) => prev?.text === 'kernel',
  argument_name: (prev, next, afterNext) => next?.text === '=' && !['=', '>'].includes(afterNext?.text),
};

export function unknownSoftKeywords(classification) {
  return classification.soft.filter((word) => !(word in SOFT_KEYWORD_POSITIONS));
}

export function unknownNamePositions(classification) {
  return classification.positions.map((pos) => pos.key).filter((key) => !(key in NAME_POSITION_CONTEXT));
}

// Classes an ordinary name may have: none, or that of a parameter name.
export const NAME_CLASSES = Object.freeze([null, PARAMETER_CLASS]);

function wordExpectation(token, [prev, next, afterNext], classification, classOfWord, softWords) {
  for (const pos of classification.positions) {
    if (pos.words.includes(token.text) && NAME_POSITION_CONTEXT[pos.key]?.(prev, next, afterNext)) {
      return { expect: pos.scope };
    }
  }
  if (classOfWord.has(token.text)) return { expect: classOfWord.get(token.text) };
  if (prev?.text === 'kernel') return { expect: KERNEL_NAME_CLASS };
  if (prev?.text === 'const') return { expect: CONST_NAME_CLASS };
  if (SOFT_KEYWORD_POSITIONS[token.text]?.when(prev, next) && softWords.has(token.text)) {
    return { expect: SOFT_KEYWORD_POSITIONS[token.text].scope };
  }
  return { anyOf: NAME_CLASSES };
}

// Characters of a string literal: escapes (`\t`) apart from the rest.
function* stringSpans(piece) {
  const re = /\\.|[^\\]+|\\$/g;
  for (let m = re.exec(piece.text); m !== null; m = re.exec(piece.text)) {
    const isEscape = m[0].length === 2 && m[0][0] === '\\';
    yield { line: piece.line, col: piece.col + m.index, length: m[0].length, expect: isEscape ? ESCAPE_CLASS : STRING_CLASS };
  }
}

// Returns [{ line, col, length, text, expect } | { ..., anyOf: [...] }]; `uniform` spans
// must have one class on all their characters.
export function expectationsFor(text, classification) {
  const classOfWord = new Map();
  for (const cls of classification.classes) for (const w of cls.words) classOfWord.set(w, cls.scope);
  const softWords = new Set(classification.soft);
  const tokens = lex(text);
  const lines = text.split('\n');
  const spans = [];
  tokens.forEach((token, i) => {
    const piece0 = token.pieces[0];
    switch (token.kind) {
      case 'lineComment':
      case 'blockComment':
        for (const piece of token.pieces) {
          const m = /\S[\s\S]*\S|\S/.exec(piece.text);
          if (m) spans.push({ line: piece.line, col: piece.col + m.index, length: m[0].length, expect: COMMENT_CLASS[token.kind] });
        }
        break;
      case 'string':
        spans.push(...stringSpans(piece0));
        break;
      case 'hex':
      case 'float':
      case 'decimal':
        spans.push({ ...piece0, length: token.text.length, expect: NUMBER_CLASS[token.kind] });
        break;
      case 'ident':
        spans.push({
          ...piece0,
          length: token.text.length,
          ...wordExpectation(token, [tokens[i - 1], tokens[i + 1], tokens[i + 2]], classification, classOfWord, softWords),
        });
        break;
      default:
        break;
    }
  });
  return spans.map((s) => ({ ...s, text: lines[s.line].slice(s.col, s.col + s.length) }));
}
