// One temporary folder per test process for the files the tests hand to Vim, bat and
// sync-keywords.mjs; it is removed when the process exits.

import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

let root = null;
let count = 0;

// A new, empty folder inside the process's scratch folder.
export function scratchDir(label) {
  if (root === null) {
    root = mkdtempSync(join(tmpdir(), 'tl-editors-'));
    process.on('exit', () => rmSync(root, { recursive: true, force: true }));
  }
  count += 1;
  const dir = join(root, `${count}-${label}`);
  mkdirSync(dir);
  return dir;
}
