// bat (syntect, the engine of bat and of many Rust tools; it implements Sublime Text's
// .sublime-syntax) on editors/sublime/TileLang.sublime-syntax.
//
// bat prints colours, not scopes, so the tests give it a theme with one unique colour per
// highlight class and read each character's class back from its colour.

import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { HIGHLIGHT_CLASSES } from '../highlight-classes.mjs';
import { SUBLIME_SYNTAX } from '../paths.mjs';
import { scratchDir } from '../scratch.mjs';

const THEME = 'tl-highlight-classes';
const DEFAULT_COLOUR = '#fefefe';

// Debian installs bat as `batcat`.
export function findBat() {
  for (const name of ['bat', 'batcat']) {
    if (spawnSync(name, ['--version'], { stdio: 'ignore' }).status === 0) return name;
  }
  return null;
}

function colourOf(index) {
  return `#10${(index + 1).toString(16).padStart(2, '0')}40`;
}

function themePlist(classes) {
  const rule = (scope, i) => `
    <dict>
      <key>scope</key><string>${scope}</string>
      <key>settings</key><dict><key>foreground</key><string>${colourOf(i)}</string></dict>
    </dict>`;
  return `<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0">
<dict>
  <key>name</key><string>${THEME}</string>
  <key>settings</key>
  <array>
    <dict>
      <key>settings</key>
      <dict><key>foreground</key><string>${DEFAULT_COLOUR}</string><key>background</key><string>#000000</string></dict>
    </dict>${classes.map(rule).join('')}
  </array>
</dict>
</plist>
`;
}

// Builds a bat cache holding only the TileLang syntax and the class theme.
function buildCache(bat, classes) {
  const root = scratchDir('bat');
  const source = join(root, 'source');
  const cache = join(root, 'cache');
  mkdirSync(join(source, 'syntaxes'), { recursive: true });
  mkdirSync(join(source, 'themes'));
  copyFileSync(SUBLIME_SYNTAX, join(source, 'syntaxes', 'TileLang.sublime-syntax'));
  writeFileSync(join(source, 'themes', `${THEME}.tmTheme`), themePlist(classes));
  execFileSync(bat, ['cache', '--build', '--blank', '--source', source, '--target', cache], { stdio: 'pipe' });
  return cache;
}

const SGR = /\x1b\[([0-9;]*)m/g;

// Per line, per character: the 24-bit foreground colour as '#rrggbb' (null where none).
function parseColours(output) {
  return output.split('\n').map((line) => {
    const colours = [];
    let fg = null;
    let last = 0;
    const emit = (text) => {
      for (const ch of text) colours.push(fg, ...(ch.length > 1 ? [fg] : []));
    };
    for (const m of line.matchAll(SGR)) {
      emit(line.slice(last, m.index));
      last = m.index + m[0].length;
      const params = m[1].split(';');
      if (m[1] === '' || m[1] === '0') fg = null;
      for (let i = 0; i < params.length; i += 1) {
        if (params[i] === '38' && params[i + 1] === '2') {
          fg = `#${params.slice(i + 2, i + 5).map((v) => Number(v).toString(16).padStart(2, '0')).join('')}`;
          i += 4;
        }
      }
    }
    emit(line.slice(last));
    return colours;
  });
}

export function createBatEngine() {
  const bat = findBat();
  const classes = [...HIGHLIGHT_CLASSES.keys()];
  const cache = buildCache(bat, classes);
  const classOfColour = new Map(classes.map((cls, i) => [colourOf(i), cls]));
  return {
    hasScopes: false,
    supportsClass: () => true,
    highlight(source) {
      const output = execFileSync(
        bat,
        ['--theme', THEME, '--language', 'tl', '--color', 'always', '--style', 'plain',
          '--paging', 'never', '--wrap', 'never', '--tabs', '0', source.path],
        { env: { ...process.env, BAT_CACHE_PATH: cache, BAT_CONFIG_PATH: '/dev/null', COLORTERM: 'truecolor' }, encoding: 'utf8' },
      );
      const colours = parseColours(output);
      return { classAt: (line, col) => classOfColour.get(colours[line]?.[col]) ?? null };
    },
  };
}
