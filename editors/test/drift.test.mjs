// No drift: the keyword lists of every editor grammar are those of grammar/TileLang.g4.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { classifyKeywords, readG4, readRules } from '../tools/keyword-classes.mjs';
import { unknownNamePositions, unknownSoftKeywords } from './lib/expectations.mjs';
import { listDrift } from './lib/grammar-lists.mjs';
import { G4_PATH, SYNC_SCRIPT } from './lib/paths.mjs';
import { scratchDir } from './lib/scratch.mjs';

const g4Text = readG4(G4_PATH);
const classification = classifyKeywords(g4Text);
const classOf = (word) => classification.classes.find((cls) => cls.words.includes(word))?.key;

// The g4 with one more tile operator, as a change to the grammar would bring.
function g4WithExtraTileOp(word) {
  const mutated = g4Text.replace(/tileOpName\s*:/, (m) => `${m} '${word}' |`);
  assert.notEqual(mutated, g4Text, 'could not find tileOpName in the g4');
  return mutated;
}

function runSync(...args) {
  return spawnSync(process.execPath, [SYNC_SCRIPT, ...args], { encoding: 'utf8' });
}

describe('keywords of grammar/TileLang.g4', () => {
  it('are read rule by rule, with the rules each rule refers to', () => {
    const rules = readRules(g4Text);
    assert.deepEqual(rules.get('scopeName').literals, ['shared', 'fragment', 'local']);
    // Quoted ':' and ';' neither start nor end a rule.
    assert.deepEqual(rules.get('constDecl').literals, ['const', ':', '=', ';']);
    assert.deepEqual(rules.get('constDecl').refs, ['name', 'typeName', 'expr']);
    // `lo=expr?` is a label and a reference to expr, not to a rule `lo`.
    assert.deepEqual(rules.get('index').refs, ['expr']);
  });

  it('name the keywords that the kernel-name and argument-name positions accept', () => {
    const words = (key) => classification.positions.find((p) => p.key === key).words;
    assert.ok(words('kernel_name').includes('gemm'));
    assert.ok(words('argument_name').includes('clear'));
    assert.ok(!words('kernel_name').includes('f16'));
    assert.ok(!words('kernel_name').includes('threads'), 'soft keywords are names already');
  });

  it('land in the highlight classes the editors use', () => {
    assert.equal(classOf('for'), 'control');
    assert.equal(classOf('else'), 'control');
    assert.equal(classOf('kernel'), 'declaration');
    assert.equal(classOf('let'), 'declaration');
    assert.equal(classOf('fragment'), 'memory_scope');
    assert.equal(classOf('pipelined'), 'loop_kind');
    assert.equal(classOf('int'), 'primitive_type');
    assert.equal(classOf('bf16'), 'dtype');
    assert.equal(classOf('reduce_absmax'), 'tile_op');
    assert.equal(classOf('ceildiv'), 'builtin');
    assert.equal(classOf('full_col'), 'policy');
    assert.equal(classOf('false'), 'boolean');
    assert.equal(classOf('auto'), 'other');
    assert.deepEqual([...classification.soft].sort(), ['dtype', 'grid', 'threads']);
  });

  it('include every quoted word of the g4, each in one class', () => {
    const quoted = new Set([...g4Text.matchAll(/'([A-Za-z_][A-Za-z0-9_]*)'/g)].map((m) => m[1]));
    assert.deepEqual([...classification.keywords].sort(), [...quoted].sort());
    const listed = classification.classes.flatMap((cls) => cls.words);
    assert.equal(new Set(listed).size, listed.length);
  });

  it('have a highlighting rule for each soft keyword and name position', () => {
    assert.deepEqual(unknownSoftKeywords(classification), []);
    assert.deepEqual(unknownNamePositions(classification), []);
  });
});

describe('editor grammar keyword lists', () => {
  it('match the g4 in the TextMate, Vim and Sublime grammars', () => {
    assert.deepEqual(listDrift(classification), []);
  });

  it('would be reported if the g4 gained a keyword', () => {
    const problems = listDrift(classifyKeywords(g4WithExtraTileOp('scatter_rows')));
    for (const format of ['tl.tmLanguage.json', 'tl.vim', 'TileLang.sublime-syntax']) {
      assert.ok(
        problems.some((p) => p.includes(format) && p.includes('tile_op')),
        `no drift reported for ${format}: ${problems.join('; ')}`,
      );
    }
  });

  it('are what sync-keywords.mjs writes (run it to fix drift)', () => {
    const result = runSync('--check', '--g4', G4_PATH);
    assert.equal(result.status, 0, result.stderr);
  });

  it('make sync-keywords.mjs --check fail once the g4 changes', () => {
    const mutated = join(scratchDir('g4'), 'TileLang.g4');
    writeFileSync(mutated, g4WithExtraTileOp('scatter_rows'));
    const result = runSync('--check', '--g4', mutated);
    assert.equal(result.status, 1);
    assert.match(result.stderr, /tl\.tmLanguage\.json/);
    assert.match(result.stderr, /tl\.vim/);
    assert.match(result.stderr, /TileLang\.sublime-syntax/);
  });
});
