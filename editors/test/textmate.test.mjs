// TextMate grammar (VS Code, and any editor that loads .tmLanguage.json) on vscode-textmate.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { createTextMateEngine } from './lib/engines/textmate.mjs';
import { badScopeNames, reachableTextMateRules, textMateStructure } from './lib/grammar-structure.mjs';
import { compileRegex } from './lib/oniguruma.mjs';
import { TEXTMATE_GRAMMAR } from './lib/paths.mjs';
import { defineEngineSuite } from './lib/suite.mjs';

const grammar = JSON.parse(readFileSync(TEXTMATE_GRAMMAR, 'utf8'));
const structure = textMateStructure(grammar);

describe('TextMate grammar structure', () => {
  it('is source.tl for .tl files', () => {
    assert.equal(grammar.scopeName, 'source.tl');
    assert.deepEqual(grammar.fileTypes, ['tl']);
  });

  it('has only regexes that Oniguruma compiles', async () => {
    const rejected = [];
    for (const { where, regex } of structure.regexes) {
      await compileRegex(regex).catch((e) => rejected.push(`${where}: ${e.message}`));
    }
    assert.deepEqual(rejected, []);
  });

  it('includes only rules it has, and uses every rule it has', () => {
    const missing = structure.references
      .filter((r) => r.target.startsWith('#') && grammar.repository[r.target.slice(1)] === undefined)
      .map((r) => `${r.where}: ${r.target}`);
    assert.deepEqual(missing, []);
    const unused = Object.keys(grammar.repository).filter((name) => !reachableTextMateRules(grammar).has(name));
    assert.deepEqual(unused, []);
  });

  it('names scopes in the TextMate convention, ending in .tl', () => {
    assert.deepEqual(badScopeNames(structure.scopes), []);
  });
});

defineEngineSuite('TextMate grammar', createTextMateEngine);
