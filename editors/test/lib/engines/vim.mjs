// Vim itself, headless, with editors/vim as its only plugin directory: filetype detection,
// the ftplugin and the syntax file all run as they would for a user.

import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { HIGHLIGHT_CLASSES } from '../highlight-classes.mjs';
import { TEST_DIR, VIM_DIR } from '../paths.mjs';
import { scratchDir } from '../scratch.mjs';

const DUMP_SCRIPT = resolve(TEST_DIR, 'vim/dump-syntax.vim');

export function findVim() {
  const probe = spawnSync('vim', ['--version'], { encoding: 'utf8' });
  return probe.status === 0 && /\+syntax/.test(probe.stdout) ? 'vim' : null;
}

// Opens `path` in a Vim that has no user configuration, only editors/vim, runs the Ex
// `commands` and quits.
function execVim(path, commands, env = {}) {
  execFileSync(
    'vim',
    [
      '-N', '-u', 'NONE', '-i', 'NONE', '-n', '-es',
      '--cmd', `set runtimepath=${VIM_DIR},$VIMRUNTIME`,
      '--cmd', 'filetype plugin indent on',
      '--cmd', 'syntax on',
      ...commands.flatMap((c) => ['-c', c]),
      '-c', 'qall!',
      path,
    ],
    { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'], timeout: 30_000 },
  );
}

function scratchFile(name) {
  return join(scratchDir('vim'), name);
}

// What vim/dump-syntax.vim reports for `path`: filetype, settings and syntax groups.
export function runVim(path) {
  const out = scratchFile('dump.json');
  execVim(path, [`source ${DUMP_SCRIPT}`], { TL_VIM_OUT: out });
  return JSON.parse(readFileSync(out, 'utf8'));
}

// The text of `path` after Vim reindents all of it (gg=G).
export function reindentWithVim(path) {
  const out = scratchFile('reindented.tl');
  execVim(path, ['normal! gg=G', `write! ${out}`]);
  return readFileSync(out, 'utf8');
}

const CLASS_OF_GROUP = new Map(
  [...HIGHLIGHT_CLASSES].flatMap(([scope, groups]) => groups.map((group) => [group, scope])),
);

export function createVimEngine() {
  return {
    hasScopes: false,
    supportsClass: (cls) => HIGHLIGHT_CLASSES.get(cls)?.length > 0,
    highlight(source) {
      const { groups } = runVim(source.path);
      return { classAt: (line, col) => CLASS_OF_GROUP.get(groups[line]?.[col]) ?? null };
    },
  };
}
