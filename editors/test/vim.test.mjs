// Vim: ftdetect, ftplugin, indent and syntax run by a headless Vim.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { createVimEngine, findVim, reindentWithVim, runVim } from './lib/engines/vim.mjs';
import { TEST_DIR } from './lib/paths.mjs';
import { scratchDir } from './lib/scratch.mjs';
import { fixtureSources } from './lib/sources.mjs';
import { defineEngineSuite } from './lib/suite.mjs';

const skip = findVim() === null ? 'vim with +syntax is not installed' : false;
const INDENT_LAYOUT = resolve(TEST_DIR, 'vim/indent-layout.tl');

describe('Vim filetype support', { skip }, () => {
  it('detects .tl files as tl (over Vim\'s own Teal mapping) and loads the syntax', () => {
    const dump = runVim(fixtureSources()[0].path);
    assert.equal(dump.filetype, 'tl');
    assert.equal(dump.syntax, 'tl');
    assert.equal(dump.commentstring, '// %s');
  });

  it('reindents kernel headers and bodies into the samples\' layout', () => {
    const text = readFileSync(INDENT_LAYOUT, 'utf8');
    assert.equal(reindentWithVim(INDENT_LAYOUT), text);
  });

  it('indents a flattened kernel back into that layout', () => {
    const text = readFileSync(INDENT_LAYOUT, 'utf8');
    // The inside of a block comment keeps its own layout, so it is left as it is.
    const flattened = text.split('\n').map((l) => (/^\s+on every line/.test(l) ? l : l.trimStart())).join('\n');
    assert.notEqual(flattened, text);
    const path = join(scratchDir('indent'), 'flat.tl');
    writeFileSync(path, flattened);
    assert.equal(reindentWithVim(path), text);
  });
});

describe('Vim compiler file', { skip }, () => {
  it('reads tlc\'s diagnostics into the quickfix list (:compiler tlc)', () => {
    const out = join(scratchDir('vim-compiler'), 'qf.json');
    const fixture = resolve(TEST_DIR, 'fixtures/tlc-diagnostics.txt');
    execFileSync('vim', ['-N', '-u', 'NONE', '-i', 'NONE', '-n', '-es',
      '--cmd', `set runtimepath=${resolve(TEST_DIR, '../vim')},$VIMRUNTIME`,
      '-c', 'compiler tlc', '-c', `cgetfile ${fixture}`,
      '-c', `call writefile([json_encode(map(getqflist(), {_, e -> [bufname(e.bufnr), e.lnum, e.col, e.type, e.text]}))], '${out}')`,
      '-c', 'qall!'], { stdio: ['ignore', 'pipe', 'pipe'], timeout: 30_000 });
    const entries = JSON.parse(readFileSync(out, 'utf8')).filter((e) => e[1] > 0 || e[3] !== '');
    assert.deepEqual(entries.map((e) => e.slice(0, 4)), [
      ['kernels/bad.tl', 14, 5, 'E'],
      ['kernels/bad.tl', 21, 7, 'W'],
      ['kernels/bad.tl', 30, 10, 'E'],
      ['kernels/bad.tl', 29, 3, 'I'],
      ['', 0, 0, 'E'],
    ]);
    assert.match(entries[0][4], /^gemm K mismatch: A has K = 32 but B has K = 64\nhint: if B is stored as \[N, K\]/);
  });

  it('runs tlc on the current file', () => {
    const text = readFileSync(resolve(TEST_DIR, '../vim/compiler/tlc.vim'), 'utf8');
    assert.match(text, /CompilerSet makeprg=tlc\\ %:S/);
  });
});

defineEngineSuite('Vim syntax', createVimEngine, { skip });
