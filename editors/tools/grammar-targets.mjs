// The editor grammar files whose keyword lists are generated from grammar/TileLang.g4, and
// how each one receives them. Each target rewrites only its generated part and leaves the
// hand-written rules around it untouched.

import { resolve } from 'node:path';
import { REPO_ROOT } from './keyword-classes.mjs';
import { formatJson } from './format-json.mjs';

export const NEVER_MATCHES = '(?!)';
const GENERATED_BY = 'generated from grammar/TileLang.g4 by editors/tools/sync-keywords.mjs; do not edit';

// `\b(?:a|b)\b`; with no words, a regex that never matches, so that rules referring to the
// list stay valid.
function wordAlternation(words) {
  return words.length === 0 ? NEVER_MATCHES : `\\b(?:${words.join('|')})\\b`;
}

function nonEmpty(classes) {
  return classes.filter((cls) => cls.words.length > 0);
}

// Replaces the lines strictly between the BEGIN and END marker lines. The markers carry the
// file's comment leader so that they stay comments in their own language.
function replaceBetweenMarkers(text, path, begin, end, body) {
  const lines = text.split('\n');
  const first = lines.findIndex((l) => l.trim().startsWith(begin));
  const last = lines.findIndex((l) => l.trim() === end);
  if (first < 0 || last < first) {
    throw new Error(`${path}: missing the '${begin}' ... '${end}' marker lines`);
  }
  return [...lines.slice(0, first + 1), ...body, ...lines.slice(last)].join('\n');
}

export const TEXTMATE_LIST_PREFIX = 'keywords-';
export const TEXTMATE_POSITION_PREFIX = 'name-keywords-';
export const TEXTMATE_RESERVED = 'reserved-words';

const textmate = {
  path: resolve(REPO_ROOT, 'editors/vscode/syntaxes/tl.tmLanguage.json'),
  render(text, { classes, positions }) {
    const grammar = JSON.parse(text);
    const repo = grammar.repository;
    for (const key of Object.keys(repo)) {
      if (key.startsWith(TEXTMATE_LIST_PREFIX) || key.startsWith(TEXTMATE_POSITION_PREFIX)) delete repo[key];
    }
    const used = nonEmpty(classes);
    repo[TEXTMATE_RESERVED] = {
      comment: `Every reserved word of the g4, ${GENERATED_BY}.`,
      patterns: used.map((cls) => ({ include: `#${TEXTMATE_LIST_PREFIX}${cls.key}` })),
    };
    for (const cls of used) {
      repo[`${TEXTMATE_LIST_PREFIX}${cls.key}`] = { match: wordAlternation(cls.words), name: cls.scope };
    }
    for (const pos of positions) {
      repo[`${TEXTMATE_POSITION_PREFIX}${pos.key}`] = {
        comment: `Keywords that the g4's ${pos.rule} accepts as a name, ${GENERATED_BY}.`,
        match: wordAlternation(pos.words),
        name: pos.scope,
      };
    }
    return `${formatJson(grammar)}\n`;
  },
};

const VIM_BEGIN = '" BEGIN GENERATED KEYWORDS';
const VIM_END = '" END GENERATED KEYWORDS';
const VIM_LINE_WIDTH = 100;

// `syn keyword` lines for one group, wrapped so that no line is wider than VIM_LINE_WIDTH.
function vimKeywordLines(group, words) {
  const lines = [];
  let line = '';
  const start = `syn keyword ${group}`;
  for (const word of words) {
    if (line !== '' && line.length + 1 + word.length > VIM_LINE_WIDTH) {
      lines.push(line);
      line = '';
    }
    line = `${line === '' ? start : line} ${word}`;
  }
  if (line !== '') lines.push(line);
  return lines;
}

const vim = {
  path: resolve(REPO_ROOT, 'editors/vim/syntax/tl.vim'),
  render(text, { classes, positions }) {
    const body = [
      ...nonEmpty(classes).flatMap((cls) => vimKeywordLines(cls.vim, cls.words)),
      ...nonEmpty(positions.filter((pos) => pos.vim !== null))
        .flatMap((pos) => vimKeywordLines(`${pos.vim} contained`, pos.words)),
    ];
    return replaceBetweenMarkers(text, this.path, VIM_BEGIN, VIM_END, body);
  },
};

const SUBLIME_BEGIN = '# BEGIN GENERATED KEYWORDS';
const SUBLIME_END = '# END GENERATED KEYWORDS';
export const SUBLIME_RESERVED = 'reserved_word';
export const SUBLIME_VARIABLE_PREFIX = 'kw_';
export const SUBLIME_POSITION_SUFFIX = '_keyword';

const sublime = {
  path: resolve(REPO_ROOT, 'editors/sublime/TileLang.sublime-syntax'),
  render(text, { classes, positions }) {
    const used = nonEmpty(classes);
    const variable = (name, words) => `  ${name}: '${wordAlternation(words)}'`;
    const body = [
      ...used.map((cls) => variable(`${SUBLIME_VARIABLE_PREFIX}${cls.key}`, cls.words)),
      variable(SUBLIME_RESERVED, used.flatMap((cls) => cls.words)),
      ...positions.map((pos) => variable(`${pos.key}${SUBLIME_POSITION_SUFFIX}`, pos.words)),
    ];
    return replaceBetweenMarkers(text, this.path, SUBLIME_BEGIN, SUBLIME_END, body);
  },
};

export const GRAMMAR_TARGETS = Object.freeze([textmate, vim, sublime]);
