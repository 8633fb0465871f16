// JSON printer for hand-read grammar files: a value that fits on one line stays there
// (`{ "include": "#code" }`), anything longer is broken over lines with two-space indent.
// JSON.stringify(v, null, 2) would put every scalar of every small object on its own line
// and make the TextMate grammar several times longer to read.

const MAX_WIDTH = 100;
const INDENT = '  ';

function inline(value) {
  if (Array.isArray(value)) {
    return value.length === 0 ? '[]' : `[${value.map(inline).join(', ')}]`;
  }
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value);
    if (entries.length === 0) return '{}';
    return `{ ${entries.map(([k, v]) => `${JSON.stringify(k)}: ${inline(v)}`).join(', ')} }`;
  }
  return JSON.stringify(value);
}

// `prefixWidth` is what precedes the value on its line (indent and key), so that the width
// limit holds for the whole line.
function format(value, depth, prefixWidth) {
  const flat = inline(value);
  const isContainer = value !== null && typeof value === 'object';
  if (!isContainer || prefixWidth + flat.length <= MAX_WIDTH) return flat;
  const inner = INDENT.repeat(depth + 1);
  const close = INDENT.repeat(depth);
  if (Array.isArray(value)) {
    const items = value.map((v) => `${inner}${format(v, depth + 1, inner.length)}`);
    return `[\n${items.join(',\n')}\n${close}]`;
  }
  const items = Object.entries(value).map(([k, v]) => {
    const key = `${JSON.stringify(k)}: `;
    return `${inner}${key}${format(v, depth + 1, inner.length + key.length)}`;
  });
  return `{\n${items.join(',\n')}\n${close}}`;
}

export function formatJson(value) {
  return format(value, 0, 0);
}
