// Oniguruma (the regex engine of TextMate, VS Code and Sublime-style grammars) in WebAssembly,
// loaded once per test process.

import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import oniguruma from 'vscode-oniguruma';

const require = createRequire(import.meta.url);
let loaded = null;

// Resolves to the onigLib object vscode-textmate's Registry wants.
export function loadOniguruma() {
  if (loaded === null) {
    const wasm = readFileSync(require.resolve('vscode-oniguruma/release/onig.wasm'));
    const buffer = wasm.buffer.slice(wasm.byteOffset, wasm.byteOffset + wasm.byteLength);
    loaded = oniguruma.loadWASM(buffer).then(() => ({
      createOnigScanner: (patterns) => new oniguruma.OnigScanner(patterns),
      createOnigString: (s) => new oniguruma.OnigString(s),
    }));
  }
  return loaded;
}

// Throws if Oniguruma rejects `regex`.
export async function compileRegex(regex) {
  const lib = await loadOniguruma();
  lib.createOnigScanner([regex]).dispose();
}
