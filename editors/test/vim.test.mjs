// Vim: ftdetect, ftplugin, indent and syntax run by a headless Vim.

import assert from 'node:assert/strict';
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

defineEngineSuite('Vim syntax', createVimEngine, { skip });
