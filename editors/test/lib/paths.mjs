// Where the tests find the repository's files. TL_G4 points the tests at another copy of the
// grammar, which is how one checks that they catch a keyword missing from the editor grammars.

import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DEFAULT_G4_PATH, REPO_ROOT } from '../../tools/keyword-classes.mjs';

export { REPO_ROOT };
export const TEST_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const EDITORS_DIR = resolve(REPO_ROOT, 'editors');
export const G4_PATH = process.env.TL_G4 ? resolve(process.env.TL_G4) : DEFAULT_G4_PATH;
export const FIXTURES_DIR = resolve(TEST_DIR, 'fixtures');
export const SAMPLES_DIR = resolve(REPO_ROOT, 'samples');

export const TEXTMATE_GRAMMAR = resolve(EDITORS_DIR, 'vscode/syntaxes/tl.tmLanguage.json');
export const VSCODE_DIR = resolve(EDITORS_DIR, 'vscode');
export const VIM_DIR = resolve(EDITORS_DIR, 'vim');
export const SUBLIME_SYNTAX = resolve(EDITORS_DIR, 'sublime/TileLang.sublime-syntax');
export const SYNC_SCRIPT = resolve(EDITORS_DIR, 'tools/sync-keywords.mjs');
