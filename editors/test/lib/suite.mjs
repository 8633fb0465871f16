// The tests every highlighting engine runs: each fixture's scope assertions, and for every
// fixture, sample and the g4's keyword list, the check that each piece of text has the class
// that the g4's lexer rules and keyword lists call for.

import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { classifyKeywords, readG4 } from '../../tools/keyword-classes.mjs';
import { parseAssertions, selectorClass, selectorMatches } from './assertions.mjs';
import { expectationsFor } from './expectations.mjs';
import { HIGHLIGHT_CLASSES } from './highlight-classes.mjs';
import { G4_PATH } from './paths.mjs';
import { fixtureSources, keywordSource, sampleSources } from './sources.mjs';

const MAX_REPORTED = 25;

function where(source, line, col) {
  return `${source.name}:${line + 1}:${col + 1}`;
}

function describeClass(cls) {
  return cls ?? 'no highlighting';
}

function classesOver(highlight, line, col, length) {
  const classes = new Set();
  for (let c = col; c < col + length; c += 1) classes.add(highlight.classAt(line, c));
  return [...classes];
}

export function expectationProblems(engine, source, classification) {
  const highlight = engine.highlight(source);
  const problems = [];
  for (const span of expectationsFor(source.text, classification)) {
    const got = classesOver(highlight, span.line, span.col, span.length);
    if (span.expect !== undefined && !engine.supportsClass(span.expect)) continue;
    const allowed = span.anyOf ?? [span.expect];
    if (got.length === 1 && allowed.includes(got[0])) continue;
    problems.push(`${where(source, span.line, span.col)} '${span.text}': expected ${allowed.map(describeClass).join(' or ')}, got ${got.map(describeClass).join(' + ')}`);
  }
  return problems;
}

// The check of one assertion's selector at a column, or null where the engine cannot make
// it: TextMate matches the selector against the whole scope stack, class-only engines check
// the selectors that name one of their classes.
function assertionCheck(engine, highlight, selector) {
  if (engine.hasScopes) {
    return (line, col) => {
      const scopes = highlight.scopesAt(line, col) ?? [];
      return { ok: selectorMatches(selector, scopes), got: scopes.join(' ') };
    };
  }
  const cls = selectorClass(selector);
  if (cls === null || !HIGHLIGHT_CLASSES.has(cls) || !engine.supportsClass(cls)) return null;
  return (line, col) => {
    const got = highlight.classAt(line, col);
    return { ok: got === cls, got: describeClass(got) };
  };
}

// Returns { problems, checked }, `checked` counting the assertions the engine could check.
export function assertionProblems(engine, source) {
  const highlight = engine.highlight(source);
  const problems = [];
  let checked = 0;
  for (const a of parseAssertions(source.text)) {
    const check = assertionCheck(engine, highlight, a.selector);
    if (check === null) continue;
    checked += 1;
    for (let col = a.firstCol; col <= a.lastCol; col += 1) {
      const { ok, got } = check(a.line, col);
      if (!ok) {
        problems.push(`${where(source, a.line, col)} (assertion on line ${a.at}): '${a.selector.text}' does not match '${got}'`);
        break;
      }
    }
  }
  return { problems, checked };
}

function assertNoProblems(problems) {
  const shown = problems.slice(0, MAX_REPORTED);
  if (problems.length > shown.length) shown.push(`... and ${problems.length - shown.length} more`);
  assert.deepEqual(shown, []);
}

// Defines the shared tests for one engine. `createEngine` returns
//   { hasScopes, supportsClass(cls), highlight(source) -> { classAt(line, col), scopesAt? } }.
export function defineEngineSuite(title, createEngine, { skip = false } = {}) {
  describe(title, { skip }, () => {
    const classification = classifyKeywords(readG4(G4_PATH));
    const fixtures = fixtureSources();
    const sources = [...fixtures, ...sampleSources(), keywordSource(classification)];
    let engine;
    before(async () => {
      engine = await createEngine();
    });

    it('has fixtures with assertions to run', () => {
      assert.ok(fixtures.length > 0, 'editors/test/fixtures has no .tl files');
      assert.ok(fixtures.every((f) => parseAssertions(f.text).length > 0));
    });

    for (const source of fixtures) {
      it(`passes the scope assertions of ${source.name}`, () => {
        const { problems, checked } = assertionProblems(engine, source);
        assertNoProblems(problems);
        assert.ok(checked > 0, 'no assertion applies to this engine');
      });
    }

    for (const source of sources) {
      it(`highlights ${source.name} as the g4 lexes it`, () => {
        assertNoProblems(expectationProblems(engine, source, classification));
      });
    }
  });
}
