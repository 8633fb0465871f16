// Reads the keyword lists back out of each editor grammar and compares them with the g4's
// classification: a keyword the g4 has and a grammar lacks (or the reverse) is drift.

import { readFileSync } from 'node:fs';
import yaml from 'js-yaml';
import {
  NEVER_MATCHES,
  SUBLIME_POSITION_SUFFIX,
  SUBLIME_RESERVED,
  SUBLIME_VARIABLE_PREFIX,
  TEXTMATE_LIST_PREFIX,
  TEXTMATE_POSITION_PREFIX,
  TEXTMATE_RESERVED,
} from '../../tools/grammar-targets.mjs';
import { SUBLIME_SYNTAX, TEXTMATE_GRAMMAR, VIM_DIR } from './paths.mjs';

const ALTERNATION = /^\\b\(\?:([A-Za-z0-9_|]*)\)\\b$/;

// `\b(?:a|b|c)\b` -> ['a', 'b', 'c']; the never-matching regex -> []; anything else -> null.
export function wordsOfAlternation(regex) {
  if (regex === NEVER_MATCHES) return [];
  const m = ALTERNATION.exec(regex ?? '');
  return m === null ? null : m[1].split('|');
}

// Each reader returns { lists: { [class key]: { words, scope } }, reserved: [...] | null,
// positions: { [position key]: words } }.

export function textMateLists(text = readFileSync(TEXTMATE_GRAMMAR, 'utf8')) {
  const repo = JSON.parse(text).repository;
  const lists = {};
  const positions = {};
  for (const [key, rule] of Object.entries(repo)) {
    if (key.startsWith(TEXTMATE_LIST_PREFIX)) {
      lists[key.slice(TEXTMATE_LIST_PREFIX.length)] = { words: wordsOfAlternation(rule.match), scope: rule.name };
    } else if (key.startsWith(TEXTMATE_POSITION_PREFIX)) {
      positions[key.slice(TEXTMATE_POSITION_PREFIX.length)] = { words: wordsOfAlternation(rule.match), scope: rule.name };
    }
  }
  const included = (repo[TEXTMATE_RESERVED]?.patterns ?? []).map((p) => p.include.replace(`#${TEXTMATE_LIST_PREFIX}`, ''));
  const reserved = included.flatMap((key) => lists[key]?.words ?? [`<missing #${TEXTMATE_LIST_PREFIX}${key}>`]);
  return { lists, reserved, positions };
}

const VIM_KEYWORD_OPTIONS = new Set(['contained', 'skipwhite', 'skipnl', 'skipempty', 'transparent', 'display']);

// Vim: `syn keyword GROUP [options] words`; contained groups only apply where another item
// offers them (nextgroup), so they are the name-position lists.
export function vimLists(text = readFileSync(`${VIM_DIR}/syntax/tl.vim`, 'utf8'), classification) {
  const byGroup = new Map();
  const containedGroups = new Set();
  for (const line of text.split('\n')) {
    const m = /^\s*syn(?:tax)?\s+keyword\s+(\w+)\s+(.*)$/.exec(line);
    if (m === null) continue;
    const tokens = m[2].split(/\s+/).filter(Boolean);
    if (tokens.includes('contained')) containedGroups.add(m[1]);
    const words = tokens.filter((t) => !VIM_KEYWORD_OPTIONS.has(t) && !t.includes('='));
    byGroup.set(m[1], [...new Set([...(byGroup.get(m[1]) ?? []), ...words])]);
  }
  const lists = {};
  const positions = {};
  for (const [group, words] of byGroup) {
    const cls = classification.classes.find((c) => c.vim === group);
    const pos = classification.positions.find((p) => p.vim === group);
    if (pos !== undefined) positions[pos.key] = { words, scope: pos.scope };
    else if (cls !== undefined) lists[cls.key] = { words, scope: cls.scope };
    else if (!containedGroups.has(group)) lists[`<group ${group}>`] = { words };
  }
  return { lists, reserved: null, positions };
}

export function loadSublimeSyntax(text = readFileSync(SUBLIME_SYNTAX, 'utf8')) {
  return yaml.load(text);
}

export function sublimeLists(syntax = loadSublimeSyntax()) {
  const lists = {};
  const positions = {};
  const scopeOf = new Map((syntax.contexts?.['reserved-words'] ?? []).map((rule) => [rule.match, rule.scope]));
  for (const [name, value] of Object.entries(syntax.variables ?? {})) {
    if (name.startsWith(SUBLIME_VARIABLE_PREFIX)) {
      const key = name.slice(SUBLIME_VARIABLE_PREFIX.length);
      lists[key] = { words: wordsOfAlternation(value), scope: scopeOf.get(`{{${name}}}`) };
    } else if (name.endsWith(SUBLIME_POSITION_SUFFIX)) {
      positions[name.slice(0, -SUBLIME_POSITION_SUFFIX.length)] = { words: wordsOfAlternation(value) };
    }
  }
  return { lists, reserved: wordsOfAlternation(syntax.variables?.[SUBLIME_RESERVED]) ?? [], positions };
}

function sameWords(a, b) {
  return a !== null && b !== null && [...a].sort().join(' ') === [...b].sort().join(' ');
}

// Compares lists keyed like `expected` ([{ key, words, scope }]); a scope of undefined in
// `found` is not checked (the format keeps no scope there).
function compareKeyed(format, what, found, expected) {
  const problems = [];
  for (const { key, words, scope } of expected) {
    const list = found[key];
    if (list === undefined) {
      if (words.length > 0) problems.push(`${format}: no ${what} list ${key} (${words.join(' ')})`);
    } else if (list.words === null) {
      problems.push(`${format}: ${what} list ${key} is not of the form \\b(?:word|...)\\b`);
    } else if (!sameWords(list.words, words)) {
      const lacks = words.filter((w) => !list.words.includes(w));
      const extra = list.words.filter((w) => !words.includes(w));
      problems.push(`${format}: ${what} list ${key} lacks [${lacks.join(' ')}] and has extra [${extra.join(' ')}] against the g4`);
    } else if (list.scope !== undefined && list.scope !== scope) {
      problems.push(`${format}: ${what} list ${key} gets scope ${list.scope}, expected ${scope}`);
    }
  }
  const keys = new Set(expected.map((e) => e.key));
  for (const key of Object.keys(found)) {
    if (!keys.has(key)) problems.push(`${format}: ${what} list ${key} is not one the g4 gives`);
  }
  return problems;
}

function formatDrift(format, { lists, reserved, positions }, classification) {
  const problems = [
    ...compareKeyed(format, 'keyword', lists, classification.classes),
    ...compareKeyed(format, 'name-position', positions, classification.positions.filter((p) => format !== 'vim/syntax/tl.vim' || p.vim !== null)),
  ];
  const all = classification.classes.flatMap((cls) => cls.words);
  if (reserved !== null && !sameWords(reserved, all)) {
    problems.push(`${format}: the reserved-word list differs from the g4's keywords`);
  }
  for (const word of classification.soft) {
    if (Object.values(lists).some((l) => l.words?.includes(word))) {
      problems.push(`${format}: soft keyword '${word}' is in an always-reserved list`);
    }
  }
  return problems;
}

// Every difference between the grammars' keyword lists and the g4, as messages.
export function listDrift(classification) {
  return [
    ...formatDrift('vscode/syntaxes/tl.tmLanguage.json', textMateLists(), classification),
    ...formatDrift('vim/syntax/tl.vim', vimLists(undefined, classification), classification),
    ...formatDrift('sublime/TileLang.sublime-syntax', sublimeLists(), classification),
  ];
}
