// The .tl files every engine is tested on: the permanent fixtures, every sample the repository
// has at the time the tests run, and one file made from the g4 that holds each keyword.

import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { FIXTURES_DIR, REPO_ROOT, SAMPLES_DIR } from './paths.mjs';
import { scratchDir } from './scratch.mjs';

function tlFilesIn(dir) {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((name) => name.endsWith('.tl'))
    .sort()
    .map((name) => join(dir, name));
}

function sourceAt(path) {
  return { name: relative(REPO_ROOT, path), path, text: readFileSync(path, 'utf8') };
}

export function fixtureSources() {
  return tlFilesIn(FIXTURES_DIR).map(sourceAt);
}

export function sampleSources() {
  return tlFilesIn(SAMPLES_DIR).map(sourceAt);
}

// Every always-reserved keyword of the g4 on a line of its own, so that a keyword that an
// editor grammar lacks shows up as an unhighlighted word. `kernel` comes last because it opens
// the kernel header, which runs to the next `{`.
export function keywordSource(classification) {
  const words = classification.classes.flatMap((cls) => cls.words);
  const ordered = [...words.filter((w) => w !== 'kernel'), ...words.filter((w) => w === 'kernel')];
  const text = `// Every reserved keyword of the g4, one a line.\n${ordered.map((w) => `${w};\n`).join('')}`;
  const path = join(scratchDir('keywords'), 'keywords.tl');
  writeFileSync(path, text);
  return { name: '<keywords of the g4>', path, text };
}
