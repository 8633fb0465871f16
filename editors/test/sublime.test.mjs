// Sublime Text syntax (also bat's): its structure, and its highlighting run by bat's syntect
// where bat is installed.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { createBatEngine, findBat } from './lib/engines/bat.mjs';
import { loadSublimeSyntax } from './lib/grammar-lists.mjs';
import {
  badScopeNames,
  reachableSublimeContexts,
  sublimeStructure,
  textMateStructure,
} from './lib/grammar-structure.mjs';
import { compileRegex } from './lib/oniguruma.mjs';
import { SUBLIME_SYNTAX, TEXTMATE_GRAMMAR } from './lib/paths.mjs';
import { defineEngineSuite } from './lib/suite.mjs';

const text = readFileSync(SUBLIME_SYNTAX, 'utf8');

describe('Sublime syntax structure', () => {
  const syntax = loadSublimeSyntax(text);
  const structure = sublimeStructure(syntax);

  it('is a YAML 1.2 sublime-syntax for .tl files with scope source.tl', () => {
    assert.ok(text.startsWith('%YAML 1.2\n---\n'));
    assert.equal(syntax.name, 'TileLang');
    assert.equal(syntax.scope, 'source.tl');
    assert.deepEqual(syntax.file_extensions, ['tl']);
    assert.ok(Array.isArray(syntax.contexts?.main));
  });

  it('uses only rule keys Sublime knows', () => {
    assert.deepEqual(structure.unknownKeys, []);
  });

  it('has only regexes that Oniguruma compiles once variables are expanded', async () => {
    const rejected = [];
    for (const { where, regex } of structure.regexes) {
      await compileRegex(regex).catch((e) => rejected.push(`${where}: ${e.message}`));
    }
    assert.deepEqual(rejected, []);
  });

  it('refers only to contexts it has, and reaches every context from main', () => {
    const names = new Set(Object.keys(syntax.contexts));
    const missing = structure.references.filter((r) => !names.has(r.target)).map((r) => `${r.where}: ${r.target}`);
    assert.deepEqual(missing, []);
    const reached = reachableSublimeContexts(syntax);
    assert.deepEqual([...names].filter((n) => !reached.has(n)), []);
  });

  it('assigns the same scopes as the TextMate grammar', () => {
    assert.deepEqual(badScopeNames(structure.scopes), []);
    const textMate = textMateStructure(JSON.parse(readFileSync(TEXTMATE_GRAMMAR, 'utf8'))).scopes;
    assert.deepEqual([...structure.scopes].sort(), [...textMate].sort());
  });
});

const skip = findBat() === null ? 'bat (Debian: batcat) is not installed' : false;
defineEngineSuite('Sublime syntax on bat', createBatEngine, { skip });
