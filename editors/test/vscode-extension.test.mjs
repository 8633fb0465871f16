// The VS Code extension folder: manifest, language configuration, and the grammar it names.

import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, it } from 'node:test';
import { VSCODE_DIR } from './lib/paths.mjs';

const readJson = (path) => JSON.parse(readFileSync(resolve(VSCODE_DIR, path), 'utf8'));
const manifest = readJson('package.json');
const language = manifest.contributes.languages[0];
const config = readJson(language.configuration);

describe('VS Code extension manifest', () => {
  it('is a declarative extension VS Code can load', () => {
    for (const field of ['name', 'displayName', 'version', 'publisher', 'description']) {
      assert.equal(typeof manifest[field], 'string', field);
    }
    assert.match(manifest.engines.vscode, /^\^\d+\.\d+\.\d+$/);
    assert.equal(manifest.main, undefined, 'a grammar extension has no code to activate');
  });

  it('associates .tl files with the language and its configuration', () => {
    assert.deepEqual(manifest.contributes.languages.length, 1);
    assert.ok(language.extensions.includes('.tl'));
    assert.ok(existsSync(resolve(VSCODE_DIR, language.configuration)));
  });

  it('contributes the source.tl grammar for that language', () => {
    const [grammar] = manifest.contributes.grammars;
    assert.equal(grammar.language, language.id);
    assert.equal(grammar.scopeName, 'source.tl');
    assert.equal(readJson(grammar.path).scopeName, grammar.scopeName);
  });

  it('sets editor defaults for the language only', () => {
    assert.deepEqual(Object.keys(manifest.contributes.configurationDefaults), [`[${language.id}]`]);
  });
});

describe('VS Code language configuration', () => {
  const regex = (pattern) => new RegExp(pattern);

  it('knows the comment forms of the g4', () => {
    assert.deepEqual(config.comments, { lineComment: '//', blockComment: ['/*', '*/'] });
  });

  it('pairs, auto-closes and surrounds the brackets', () => {
    const brackets = [['{', '}'], ['[', ']'], ['(', ')']];
    assert.deepEqual(config.brackets, brackets);
    const autoClosing = config.autoClosingPairs.map((p) => [p.open, p.close]);
    for (const pair of [...brackets, ['"', '"']]) assert.deepEqual(autoClosing.filter((p) => p[0] === pair[0]), [pair]);
    for (const pair of [...brackets, ['"', '"']]) assert.ok(config.surroundingPairs.some((p) => p[0] === pair[0] && p[1] === pair[1]));
  });

  it('indents after an opening bracket and outdents at a closing one', () => {
    const increase = regex(config.indentationRules.increaseIndentPattern);
    const decrease = regex(config.indentationRules.decreaseIndentPattern);
    for (const line of ['{', '  for k in pipelined(n, stages = 3) {', '  } else {', '  copy(A[0, 0],', '  if c { // why']) {
      assert.ok(increase.test(line), line);
    }
    for (const line of ['  copy(A, B);', '}', 'let c = a < b;', '  x = y[0];']) assert.ok(!increase.test(line), line);
    for (const line of ['}', '  } else {', '  );']) assert.ok(decrease.test(line), line);
    assert.ok(!decrease.test('  copy(A, B);'));
  });

  it('folds // #region ... // #endregion blocks', () => {
    const { start, end } = config.folding.markers;
    assert.ok(regex(start).test('  // #region tiles'));
    assert.ok(regex(end).test('  // #endregion'));
    assert.ok(!regex(start).test('  copy(A, B); // #region'));
  });

  it('treats identifiers and literals as words', () => {
    const word = new RegExp(`^(?:${config.wordPattern})$`);
    for (const w of ['block_M', 'f8e4m3', '0xFF_FF', '1.5e-3', '128']) assert.ok(word.test(w), w);
    assert.ok(!word.test('a+b'));
  });
});

describe('VS Code problem matcher', () => {
  const [matcher] = manifest.contributes.problemMatchers;
  const regexp = new RegExp(matcher.pattern.regexp);
  const lines = readFileSync(resolve(VSCODE_DIR, '../test/fixtures/tlc-diagnostics.txt'), 'utf8').split('\n');

  it('is contributed as $tlc for tasks to name', () => {
    assert.equal(matcher.name, 'tlc');
    assert.equal(matcher.owner, 'tlc');
  });

  it('takes file, line, column, severity and message from tlc\'s errors and warnings', () => {
    const found = lines.map((l) => regexp.exec(l)).filter(Boolean).map((m) => ({
      file: m[matcher.pattern.file], line: Number(m[matcher.pattern.line]),
      column: Number(m[matcher.pattern.column]), severity: m[matcher.pattern.severity],
      message: m[matcher.pattern.message],
    }));
    assert.deepEqual(found.map((f) => [f.file, f.line, f.column, f.severity]), [
      ['kernels/bad.tl', 14, 5, 'error'],
      ['kernels/bad.tl', 21, 7, 'warning'],
      ['kernels/bad.tl', 30, 10, 'error'],
    ]);
    assert.equal(found[0].message, 'gemm K mismatch: A has K = 32 but B has K = 64');
  });

  it('ignores source lines, carets, hints and notes', () => {
    for (const l of lines.filter((x) => /^\s|^hint:|: note: |^tlc:/.test(x))) {
      assert.equal(regexp.exec(l), null, l);
    }
  });
});
