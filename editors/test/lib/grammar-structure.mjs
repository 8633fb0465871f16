// Static structure of the TextMate and Sublime grammars: their regexes, the scopes they
// assign and the rules they refer to, so that the tests can check what the engines only
// notice when a rule is reached (a bad regex, a missing include, a rule nothing uses).

const SCOPE_NAME = /^[a-z0-9-]+(?:\.[a-z0-9-]+)*$/;

function scopesIn(text) {
  return String(text).split(/\s+/).filter(Boolean);
}

// TextMate: regexes of match/begin/end/while, scopes of name/contentName/captures, and
// references `#rule` of include. `where` is a path like repository.strings.patterns[0].
export function textMateStructure(grammar) {
  const regexes = [];
  const scopes = new Set();
  const references = [];
  const visit = (rule, where) => {
    for (const key of ['match', 'begin', 'end', 'while']) {
      if (rule[key] !== undefined) regexes.push({ where: `${where}.${key}`, regex: rule[key] });
    }
    for (const key of ['name', 'contentName']) {
      if (rule[key] !== undefined) scopesIn(rule[key]).forEach((s) => scopes.add(s));
    }
    if (rule.include !== undefined) references.push({ where, target: rule.include });
    for (const key of ['captures', 'beginCaptures', 'endCaptures', 'whileCaptures']) {
      for (const [group, capture] of Object.entries(rule[key] ?? {})) visit(capture, `${where}.${key}[${group}]`);
    }
    (rule.patterns ?? []).forEach((p, i) => visit(p, `${where}.patterns[${i}]`));
  };
  (grammar.patterns ?? []).forEach((p, i) => visit(p, `patterns[${i}]`));
  for (const [name, rule] of Object.entries(grammar.repository ?? {})) visit(rule, `repository.${name}`);
  return { regexes, scopes, references };
}

// Names of the repository rules reachable from the grammar's top-level patterns.
export function reachableTextMateRules(grammar) {
  const reached = new Set();
  const refsOf = (rule) => textMateStructure({ patterns: [rule] }).references.map((r) => r.target);
  const queue = (grammar.patterns ?? []).flatMap(refsOf);
  while (queue.length > 0) {
    const target = queue.pop();
    const name = target.startsWith('#') ? target.slice(1) : null;
    if (name === null || reached.has(name) || grammar.repository?.[name] === undefined) continue;
    reached.add(name);
    queue.push(...refsOf(grammar.repository[name]));
  }
  return reached;
}

const SUBLIME_RULE_KEYS = new Set([
  'match', 'scope', 'captures', 'push', 'set', 'pop', 'include', 'meta_scope',
  'meta_content_scope', 'meta_include_prototype', 'clear_scopes', 'comment',
]);

// Replaces {{variable}} references, which may nest, as Sublime does before compiling.
export function expandSublimeVariables(regex, variables) {
  let expanded = regex;
  for (let depth = 0; depth < 10 && /\{\{\w+\}\}/.test(expanded); depth += 1) {
    expanded = expanded.replace(/\{\{(\w+)\}\}/g, (m, name) => {
      if (!(name in variables)) throw new Error(`undefined variable ${name} in ${regex}`);
      return variables[name];
    });
  }
  return expanded;
}

function contextNames(value) {
  if (value === undefined) return [];
  if (typeof value === 'string') return [value];
  if (Array.isArray(value) && value.every((v) => typeof v === 'string')) return value;
  return [];
}

// Sublime: expanded regexes, scopes, context references and rules with unknown keys.
export function sublimeStructure(syntax) {
  const regexes = [];
  const scopes = new Set();
  const references = [];
  const unknownKeys = [];
  for (const [context, rules] of Object.entries(syntax.contexts ?? {})) {
    rules.forEach((rule, i) => {
      const where = `contexts.${context}[${i}]`;
      for (const key of Object.keys(rule)) if (!SUBLIME_RULE_KEYS.has(key)) unknownKeys.push(`${where}.${key}`);
      if (rule.match !== undefined) {
        regexes.push({ where, regex: expandSublimeVariables(rule.match, syntax.variables ?? {}) });
      }
      for (const key of ['scope', 'meta_scope', 'meta_content_scope']) {
        if (rule[key] !== undefined) scopesIn(rule[key]).forEach((s) => scopes.add(s));
      }
      for (const capture of Object.values(rule.captures ?? {})) scopesIn(capture).forEach((s) => scopes.add(s));
      for (const key of ['include', 'push', 'set']) {
        for (const target of contextNames(rule[key])) references.push({ where, target });
      }
    });
  }
  return { regexes, scopes, references, unknownKeys };
}

export function reachableSublimeContexts(syntax) {
  const { references } = sublimeStructure(syntax);
  const reached = new Set(['main']);
  const queue = ['main'];
  while (queue.length > 0) {
    const from = queue.pop();
    for (const ref of references) {
      if (ref.where.startsWith(`contexts.${from}[`) && !reached.has(ref.target)) {
        reached.add(ref.target);
        queue.push(ref.target);
      }
    }
  }
  return reached;
}

export function badScopeNames(scopes) {
  return [...scopes].filter((s) => !SCOPE_NAME.test(s) || !s.endsWith('.tl'));
}
