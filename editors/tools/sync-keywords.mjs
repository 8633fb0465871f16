#!/usr/bin/env node
// Rewrites the keyword lists of every editor grammar under editors/ from grammar/TileLang.g4.
//
//   node editors/tools/sync-keywords.mjs            rewrite the lists that are out of date
//   node editors/tools/sync-keywords.mjs --check    only report them; exit 1 if any is stale
//   ... --g4 PATH                                    read another grammar (to try out a change)
//
// Only the generated parts change: the TextMate repository entries keywords-* and
// reserved-words, and the text between the GENERATED KEYWORDS markers of the Vim and
// Sublime syntaxes.

import { readFileSync, writeFileSync } from 'node:fs';
import { relative } from 'node:path';
import { parseArgs } from 'node:util';
import { DEFAULT_G4_PATH, REPO_ROOT, classifyKeywords, readG4 } from './keyword-classes.mjs';
import { GRAMMAR_TARGETS } from './grammar-targets.mjs';

function main() {
  const { values } = parseArgs({
    options: {
      check: { type: 'boolean', default: false },
      g4: { type: 'string', default: DEFAULT_G4_PATH },
    },
  });
  const classification = classifyKeywords(readG4(values.g4));
  let stale = 0;
  for (const target of GRAMMAR_TARGETS) {
    const current = readFileSync(target.path, 'utf8');
    const wanted = target.render(current, classification);
    if (wanted === current) continue;
    stale += 1;
    const name = relative(REPO_ROOT, target.path);
    if (values.check) {
      console.error(`${name}: keyword lists differ from the g4`);
    } else {
      writeFileSync(target.path, wanted);
      console.log(`${name}: keyword lists rewritten`);
    }
  }
  if (values.check && stale > 0) {
    console.error('run: node editors/tools/sync-keywords.mjs');
    process.exitCode = 1;
  }
}

main();
