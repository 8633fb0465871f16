// Reads grammar/TileLang.g4 and sorts its keywords into the highlight classes that every
// editor grammar under editors/ uses.
//
// The g4 is the single source of truth for the syntax, so the editor grammars never own a
// keyword list: sync-keywords.mjs writes the lists from here, and editors/test checks the
// grammars against the same classification. A keyword is any quoted literal of a parser rule
// that looks like an identifier ('kernel', 'f16', 'reduce_sum', ...).

import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const DEFAULT_G4_PATH = resolve(REPO_ROOT, 'grammar', 'TileLang.g4');

// Highlight classes in precedence order: a literal belongs to the first class whose rules
// contain it. `fromRules: null` marks the catch-all, so a keyword added to the g4 in a new
// rule is still highlighted (as keyword.other) instead of silently dropped.
//   key:   identifier of the list inside each editor grammar file
//   scope: TextMate / Sublime scope name
//   vim:   Vim syntax group
export const KEYWORD_CLASSES = Object.freeze([
  { key: 'control', scope: 'keyword.control.tl', vim: 'tlControl', fromRules: ['forStmt', 'ifStmt'] },
  { key: 'declaration', scope: 'storage.type.tl', vim: 'tlDeclaration', fromRules: ['constDecl', 'kernelDecl', 'letStmt'] },
  { key: 'memory_scope', scope: 'storage.type.scope.tl', vim: 'tlMemoryScope', fromRules: ['scopeName'] },
  { key: 'loop_kind', scope: 'keyword.other.loop.tl', vim: 'tlLoopKind', fromRules: ['loopKind'] },
  { key: 'primitive_type', scope: 'storage.type.primitive.tl', vim: 'tlPrimitiveType', fromRules: ['typeName'] },
  { key: 'dtype', scope: 'storage.type.dtype.tl', vim: 'tlDtype', fromRules: ['dtypeName'] },
  { key: 'tile_op', scope: 'support.function.tile.tl', vim: 'tlTileOp', fromRules: ['tileOpName'] },
  { key: 'builtin', scope: 'support.function.builtin.tl', vim: 'tlBuiltin', fromRules: ['builtinName'] },
  { key: 'policy', scope: 'constant.language.policy.tl', vim: 'tlPolicy', fromRules: ['policyName'] },
  { key: 'boolean', scope: 'constant.language.boolean.tl', vim: 'tlBoolean', fromRules: ['literal'] },
  { key: 'other', scope: 'keyword.other.tl', vim: 'tlKeyword', fromRules: null },
].map(Object.freeze));

// Soft keywords are the literals the g4's `name` rule accepts as ordinary identifiers
// (`threads = 128` is a common parameter). Grammars highlight them only in keyword
// position, so they are kept out of the always-reserved lists above.
export const SOFT_KEYWORD_RULE = 'name';

// Name positions where the g4 also accepts some keywords (`kernel gemm`, `clear = false`):
// there the keyword is highlighted as the name it is. A missing rule accepts none.
//   key:   identifier of the word list inside each editor grammar file
//   rule:  the g4 rule of the position
//   scope: TextMate / Sublime scope of a name there
//   vim:   Vim syntax group for such a keyword there (null: Vim leaves these names plain)
export const NAME_POSITIONS = Object.freeze([
  { key: 'kernel_name', rule: 'kernelName', scope: 'entity.name.function.kernel.tl', vim: 'tlKernelNameKeyword' },
  { key: 'argument_name', rule: 'argName', scope: 'variable.parameter.tl', vim: null },
].map(Object.freeze));

const KEYWORD_LITERAL = /^[A-Za-z_][A-Za-z0-9_]*$/;

// One token of ANTLR grammar text. Character sets (`[0-9_]`) and quoted literals are single
// tokens so that the `;` and `:` inside them never end or start a rule.
const G4_TOKEN = /\s+|\/\/[^\n]*|\/\*[\s\S]*?\*\/|'(?:\\.|[^'\\])*'|\[(?:\\.|[^\]\\])*\]|[A-Za-z_][A-Za-z0-9_]*|./gy;

function unquote(literal) {
  return literal.slice(1, -1).replace(/\\(.)/g, '$1');
}

// Returns Map(ruleName -> { literals, refs }): the rule's quoted literals and the parser
// rules it refers to, each in order of first appearance. Labels (`lo=expr`, `op=(...)`) are
// not references.
export function readRules(g4Text) {
  const rules = new Map();
  const tokens = [];
  G4_TOKEN.lastIndex = 0;
  for (let m = G4_TOKEN.exec(g4Text); m !== null; m = G4_TOKEN.exec(g4Text)) {
    if (!/^\s/.test(m[0]) && !m[0].startsWith('//') && !m[0].startsWith('/*')) tokens.push(m[0]);
  }
  let current = null;
  tokens.forEach((tok, i) => {
    if (current === null) {
      if (tok === ':' && /^[A-Za-z_]/.test(tokens[i - 1] ?? '')) {
        current = { literals: [], refs: [] };
        rules.set(tokens[i - 1], current);
      }
    } else if (tok === ';') {
      current = null;
    } else if (tok.startsWith("'")) {
      const literal = unquote(tok);
      if (!current.literals.includes(literal)) current.literals.push(literal);
    } else if (isParserRule(tok) && tokens[i + 1] !== '=' && tokens[i + 1] !== '+=' && !current.refs.includes(tok)) {
      current.refs.push(tok);
    }
  });
  return rules;
}

function isParserRule(name) {
  return /^[a-z]/.test(name);
}

function requireRule(rules, name) {
  const rule = rules.get(name);
  if (rule === undefined) {
    throw new Error(`grammar/TileLang.g4 has no rule '${name}' (editors/tools/keyword-classes.mjs expects it)`);
  }
  return rule.literals.filter((l) => KEYWORD_LITERAL.test(l));
}

// Keyword literals of `name` and of every parser rule it reaches.
function reachableKeywords(rules, name) {
  const seen = new Set();
  const words = [];
  const queue = [name];
  while (queue.length > 0) {
    const rule = rules.get(queue.shift());
    if (rule === undefined || seen.has(rule)) continue;
    seen.add(rule);
    words.push(...rule.literals.filter((l) => KEYWORD_LITERAL.test(l) && !words.includes(l)));
    queue.push(...rule.refs);
  }
  return words;
}

// Classifies every keyword literal of the g4. Returns
//   { classes: [{...KEYWORD_CLASSES[i], words}], positions: [{...NAME_POSITIONS[i], words}],
//     soft: [...], keywords: Set(all words) }
export function classifyKeywords(g4Text) {
  const rules = readRules(g4Text);
  const soft = requireRule(rules, SOFT_KEYWORD_RULE);
  const taken = new Set(soft);
  const classes = KEYWORD_CLASSES.map((cls) => ({ ...cls, words: [] }));
  const claim = (cls, word) => {
    if (taken.has(word)) return;
    taken.add(word);
    cls.words.push(word);
  };
  for (const cls of classes) {
    if (cls.fromRules === null) continue;
    for (const rule of cls.fromRules) {
      for (const word of requireRule(rules, rule)) claim(cls, word);
    }
  }
  const catchAll = classes.find((cls) => cls.fromRules === null);
  for (const [name, rule] of rules) {
    if (!isParserRule(name)) continue;
    for (const word of rule.literals) {
      if (KEYWORD_LITERAL.test(word)) claim(catchAll, word);
    }
  }
  const positions = NAME_POSITIONS.map((pos) => ({
    ...pos,
    words: reachableKeywords(rules, pos.rule).filter((w) => !soft.includes(w)),
  }));
  return { classes, positions, soft, keywords: new Set([...taken]) };
}

export function readG4(path = DEFAULT_G4_PATH) {
  return readFileSync(path, 'utf8');
}
