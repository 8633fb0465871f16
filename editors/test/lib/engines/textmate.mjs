// The TextMate grammar run by vscode-textmate on Oniguruma: the engine VS Code itself uses.

import { readFileSync } from 'node:fs';
import vsctm from 'vscode-textmate';
import { innermostClass } from '../highlight-classes.mjs';
import { loadOniguruma } from '../oniguruma.mjs';
import { TEXTMATE_GRAMMAR } from '../paths.mjs';

// Loads a TextMate grammar (by default the one VS Code gets) as a vscode-textmate IGrammar.
export async function loadTextMateGrammar(path = TEXTMATE_GRAMMAR) {
  const registry = new vsctm.Registry({
    onigLib: loadOniguruma(),
    loadGrammar: async () => vsctm.parseRawGrammar(readFileSync(path, 'utf8'), path),
  });
  return registry.loadGrammar('source.tl');
}

// Per line, per character: the scope stack (outermost first).
export function tokenizeScopes(grammar, text) {
  let state = vsctm.INITIAL;
  return text.split('\n').map((line) => {
    const result = grammar.tokenizeLine(line, state);
    state = result.ruleStack;
    const perChar = new Array(line.length);
    for (const token of result.tokens) {
      for (let c = token.startIndex; c < Math.min(token.endIndex, line.length); c += 1) perChar[c] = token.scopes;
    }
    return perChar;
  });
}

export async function createTextMateEngine() {
  const grammar = await loadTextMateGrammar();
  return {
    supportsClass: () => true,
    hasScopes: true,
    highlight(source) {
      const scopes = tokenizeScopes(grammar, source.text);
      return {
        scopesAt: (line, col) => scopes[line]?.[col] ?? null,
        classAt: (line, col) => innermostClass(scopes[line]?.[col] ?? []),
      };
    },
  };
}
