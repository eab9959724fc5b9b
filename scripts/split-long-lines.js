// Splits the string and template literals that make a line wider than 120 columns into a `+` chain of
// shorter literals, cut at word boundaries, so that `npm run format` can lay the chain out within the
// width (the house test, test/architecture/house.test.ts, allows no wider line). A developer tool (not run
// by the build or by autoctx).
//
// The value is kept exactly: a cut falls between two characters of the literal's source text, never
// inside an escape sequence, a surrogate pair or a `${...}` substitution, and every rewrite is checked:
// the new chain, parsed again, must give the same sequence of characters and substitutions as the
// literal it replaces, or the script stops before writing any file. A literal is left whole where a `+`
// chain cannot stand (import specifiers, type positions like `type T = 'a'`, property names, `as const`,
// tagged templates, JSX attributes, directives, `case` labels) and where a cut would still leave a piece
// too wide (a long `${...}`). Those lines, and long lines with no literal, are listed for a hand: pull the
// `${...}` out into a variable or a `+ (a ? b : c)`, build a long regular expression with `new RegExp`.
//
// Only lines wider than the width are touched, so the script is idempotent. Run it and format until it
// lists nothing to cut (twice is usually enough; comments: scripts/rewrap-comments.mjs):
//   node scripts/split-long-lines.js [--check] [files or folders...]
//   npm run format
// Default: src scripts bench bin knowledge-example test (not test/fixtures, hosts-e2e, *.generated.*).
// --check writes nothing and exits 1 when there is something to cut.
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

const WIDTH = 120;
const EXTENSIONS = /\.(ts|tsx|js|mjs|cjs)$/;
const SKIPPED = /(^|\/)(node_modules|dist|test\/fixtures|hosts-e2e)(\/|$)|\.generated\./;

const width = (s) => [...s].length;

function files(roots) {
  const out = [];
  const walk = (p) => {
    const rel = path.relative(process.cwd(), p).split(path.sep).join('/');
    if (SKIPPED.test(rel)) return;
    if (fs.statSync(p).isDirectory()) for (const e of fs.readdirSync(p).sort()) walk(path.join(p, e));
    else if (EXTENSIONS.test(p)) out.push(rel);
  };
  for (const r of roots) walk(r);
  return out;
}

function scriptKind(file) {
  if (file.endsWith('.tsx')) return ts.ScriptKind.TSX;
  if (/\.(m|c)?js$/.test(file)) return ts.ScriptKind.JS;
  return ts.ScriptKind.TS;
}

const isLiteral = (n) => ts.isStringLiteral(n) || ts.isNoSubstitutionTemplateLiteral(n) || ts.isTemplateExpression(n);

/** Whether a `+` chain may stand where this literal stands. */
function cuttable(n) {
  const p = n.parent;
  if (ts.isLiteralTypeNode(p) || ts.isTaggedTemplateExpression(p) || ts.isJsxAttribute(p)) return false;
  if (ts.isImportDeclaration(p) || ts.isExportDeclaration(p) || ts.isExternalModuleReference(p)) return false;
  if (ts.isImportTypeNode(p) || ts.isLiteralTypeNode(p.parent)) return false;
  if (
    ts.isCallExpression(p) &&
    (p.expression.kind === ts.SyntaxKind.ImportKeyword || p.expression.getText() === 'require')
  )
    return false;
  if (p.name === n || ts.isComputedPropertyName(p) || ts.isElementAccessExpression(p)) return false;
  if (ts.isAsExpression(p) && ts.isTypeReferenceNode(p.type) && p.type.typeName.getText() === 'const') return false;
  if (ts.isExpressionStatement(p)) return false; // a directive ('use strict')
  if (ts.isCaseClause(p)) return false;
  return true;
}

/** Whether the chain needs parentheses where the literal stands. */
function needsParens(n) {
  const p = n.parent;
  if (ts.isBinaryExpression(p)) {
    const op = p.operatorToken.kind;
    // `+` is left-associative and a string on either side makes it a concatenation: `a + 'x' + 'y'` is `a + 'xy'`.
    if (op === ts.SyntaxKind.PlusToken) return false;
    return (
      ts.getBinaryOperatorPrecedence(op) >= ts.getBinaryOperatorPrecedence(ts.SyntaxKind.PlusToken) || p.left === n
    );
  }
  return !(
    ((ts.isCallExpression(p) || ts.isNewExpression(p)) && p.arguments?.includes(n)) ||
    (ts.isVariableDeclaration(p) && p.initializer === n) ||
    (ts.isPropertyAssignment(p) && p.initializer === n) ||
    (ts.isPropertyDeclaration(p) && p.initializer === n) ||
    (ts.isParameter(p) && p.initializer === n) ||
    (ts.isBindingElement(p) && p.initializer === n) ||
    ts.isArrayLiteralExpression(p) ||
    ts.isReturnStatement(p) ||
    ts.isThrowStatement(p) ||
    ts.isTemplateSpan(p) ||
    ts.isParenthesizedExpression(p) ||
    (ts.isArrowFunction(p) && p.body === n) ||
    (ts.isConditionalExpression(p) && p.condition !== n) ||
    ts.isExportAssignment(p)
  );
}

/**
 * The literal's source as atoms, the units a cut never splits: a character (a surrogate pair whole),
 * an escape sequence, a `${...}` substitution. With the literal's opening and closing delimiter.
 */
function atomsOf(n, sf) {
  const src = n.getText(sf);
  if (!ts.isTemplateExpression(n)) return {quote: src[0], atoms: textAtoms(src.slice(1, -1))};
  const start = n.getStart(sf);
  const atoms = textAtoms(src.slice(1, n.head.end - start - 2));
  let prevEnd = n.head.end; // just after the `${`
  for (const span of n.templateSpans) {
    const lit = span.literal;
    const litStart = lit.getStart(sf); // the `}`
    atoms.push({subst: true, text: `\${${src.slice(prevEnd - start, litStart - start)}}`});
    const closing = ts.isTemplateTail(lit) ? 1 : 2;
    atoms.push(...textAtoms(src.slice(litStart - start + 1, lit.end - start - closing)));
    prevEnd = lit.end;
  }
  return {quote: '`', atoms};
}

function textAtoms(text) {
  const out = [];
  let i = 0;
  while (i < text.length) {
    let n;
    if (text[i] === '\\')
      n = /^\\(u\{[0-9a-fA-F]+\}|u[0-9a-fA-F]{4}|x[0-9a-fA-F]{2}|[0-7]{1,3}|\r\n|[\s\S])/.exec(text.slice(i))[0].length;
    else n = text.codePointAt(i) > 0xffff ? 2 : 1;
    out.push({text: text.slice(i, i + n)});
    i += n;
  }
  return out;
}

/**
 * Cuts the atoms into pieces whose lines are at most `limit` wide: after a space where there is one
 * in the last two thirds of the line, else where the line is full. Returns the pieces' source texts.
 */
function cut(quote, atoms, limit) {
  const pieces = [[]];
  let line = 0; // width of the current piece's current line
  let space = -1; // index in the current piece just after its last space on the current line
  for (const atom of atoms) {
    const piece = pieces[pieces.length - 1];
    if (atom.text === '\n') {
      piece.push(atom);
      line = 0;
      space = -1;
      continue;
    }
    const w = width(atom.text);
    if (line + w > limit && piece.length > 0) {
      if (space > 0 && lineWidthAt(piece, space) > limit / 3) {
        const moved = piece.splice(space);
        pieces.push(moved);
        line = moved.reduce((s, a) => s + width(a.text), 0);
      } else {
        pieces.push([]);
        line = 0;
      }
      space = -1;
    }
    const current = pieces[pieces.length - 1];
    current.push(atom);
    line += w;
    if (atom.text === ' ') space = current.length;
  }
  return pieces.filter((p) => p.length > 0).map((p) => quote + p.map((a) => a.text).join('') + quote);
}

/** The cut with the fewest pieces, and of those the one whose shortest piece is longest (no stub of a word). */
function balanced(quote, atoms, limit) {
  let best = cut(quote, atoms, limit);
  const shortest = (pieces) => Math.min(...pieces.map(width));
  for (let l = limit - 2; l >= Math.ceil(limit * 0.6); l -= 2) {
    const pieces = cut(quote, atoms, l);
    if (pieces.length < best.length || (pieces.length === best.length && shortest(pieces) > shortest(best)))
      best = pieces;
  }
  return best;
}

/** The width of the current line of a piece up to an index. */
function lineWidthAt(piece, index) {
  let w = 0;
  for (let i = index - 1; i >= 0 && piece[i].text !== '\n'; i--) w += width(piece[i].text);
  return w;
}

/** The sequence of cooked characters and substitution sources that an expression of literals and `+` makes. */
function flatten(n, sf) {
  if (ts.isParenthesizedExpression(n)) return flatten(n.expression, sf);
  if (ts.isBinaryExpression(n) && n.operatorToken.kind === ts.SyntaxKind.PlusToken)
    return merge([...flatten(n.left, sf), ...flatten(n.right, sf)]);
  if (ts.isStringLiteral(n) || ts.isNoSubstitutionTemplateLiteral(n)) return [n.text];
  if (ts.isTemplateExpression(n)) {
    const out = [n.head.text];
    for (const s of n.templateSpans) out.push({subst: s.expression.getText(sf)}, s.literal.text);
    return merge(out);
  }
  throw new Error(`not a literal: ${n.getText(sf)}`);
}

function merge(items) {
  const out = [];
  for (const it of items) {
    if (typeof it === 'string' && typeof out[out.length - 1] === 'string') out[out.length - 1] += it;
    else if (it !== '') out.push(it);
  }
  return out;
}

function expressionOf(text, file) {
  const sf = ts.createSourceFile(file, `(${text});`, ts.ScriptTarget.Latest, true, scriptKind(file));
  return {sf, node: sf.statements[0].expression.expression};
}

/** The rewrites that make the long lines of one file narrower, and the long lines left as they are. */
function plan(file, text) {
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, scriptKind(file));
  const lines = text.split('\n');
  const starts = [];
  let at = 0;
  for (const l of lines) {
    starts.push(at);
    at += l.length + 1;
  }
  const long = new Set(lines.flatMap((l, i) => (width(l) > WIDTH ? [i] : [])));
  if (long.size === 0) return {edits: [], left: []};
  const covered = new Set();
  const edits = [];
  const visit = (n) => {
    if (isLiteral(n)) {
      const first = sf.getLineAndCharacterOfPosition(n.getStart(sf)).line;
      const last = sf.getLineAndCharacterOfPosition(n.end).line;
      const hits = [];
      for (let i = first; i <= last; i++) if (long.has(i)) hits.push(i);
      const source = n.getText(sf);
      if (hits.length > 0 && width(source) > 40 && cuttable(n)) {
        const indent = /^\s*/.exec(lines[first])[0].length;
        const limit = Math.min(100, Math.max(40, WIDTH - indent - 14));
        const {quote, atoms} = atomsOf(n, sf);
        let pieces = balanced(quote, atoms, limit);
        // A literal that fits the width on its own but not with the code around it (a test's title): in two.
        if (pieces.length === 1) pieces = balanced(quote, atoms, Math.ceil(width(source) / 2) + 4);
        // A cut that leaves a piece too wide for any line (a long `${...}`) does not help: left for a hand.
        const fits = pieces.every((piece) => Math.max(...piece.split('\n').map(width)) <= WIDTH - indent - 4);
        if (pieces.length > 1 && fits) {
          let chain = pieces.join(' +\n');
          if (needsParens(n)) chain = `(${chain})`;
          const again = expressionOf(chain, file);
          const before = JSON.stringify(flatten(n, sf));
          const after = JSON.stringify(flatten(again.node, again.sf));
          if (before !== after) throw new Error(`${file}:${first + 1}: a cut would change the value of ${source}`);
          edits.push({start: n.getStart(sf), end: n.end, text: chain});
          for (const h of hits) covered.add(h);
          return; // a literal's own parts are not cut again
        }
      }
    }
    ts.forEachChild(n, visit);
  };
  visit(sf);
  const left = [...long].filter((i) => !covered.has(i)).map((i) => `${file}:${i + 1}: ${width(lines[i])} columns`);
  return {edits, left};
}

function apply(text, edits) {
  let out = text;
  for (const e of [...edits].sort((a, b) => b.start - a.start)) out = out.slice(0, e.start) + e.text + out.slice(e.end);
  return out;
}

const args = process.argv.slice(2);
const check = args.includes('--check');
const roots = args.filter((a) => a !== '--check');
const plans = [];
const left = [];
const DEFAULT_ROOTS = ['src', 'scripts', 'bench', 'bin', 'knowledge-example', 'test'];
for (const file of files(roots.length > 0 ? roots : DEFAULT_ROOTS)) {
  const text = fs.readFileSync(file, 'utf8');
  const p = plan(file, text);
  left.push(...p.left);
  if (p.edits.length > 0) plans.push({file, text, edits: p.edits});
}
// Every file is planned (and every cut checked) before any is written.
for (const {file, text, edits} of plans) {
  if (check) console.log(`${file}: ${edits.length} literal(s) to cut`);
  else fs.writeFileSync(file, apply(text, edits));
}
for (const l of left) console.log(`left for a hand: ${l}`);
console.log(
  `${plans.length} file(s) ${check ? 'with literals to cut' : 'rewritten'}; ${left.length} long line(s) left`,
);
if (check && plans.length > 0) process.exitCode = 1;
