// Rewraps comments wider than the print width (120 columns), and only comments: the formatter
// (Biome) wraps code but leaves comment text as written. Run by scripts/format-all.sh.
//
// Comments are found by the TypeScript parser (the trivia before each token), so text inside a
// string, a template or a regular expression is never taken for one. Every file is checked after
// the rewrite: its tokens (everything but comments and white space) must be exactly the ones it
// had, or the file is left as it was and the script fails.
//
// What it does to a comment line wider than the width:
// - a `//` comment alone on its line is split into several `//` lines, word by word;
// - a `//` comment after code moves onto its own lines just above that code, same indentation;
// - a line of a `/** ... */` or `/* ... */` block is split into several lines with the block's prefix
//   (` * `); a one-line block comment alone on its line becomes a block of several lines.
// Left as they are (and listed): directives (biome-ignore, @ts-…, eslint-…), a word longer than the
// width (a URL), lines in a ``` fence or a table, comments that follow a directive, and comments
// inside JSX. Usage: node scripts/rewrap-comments.mjs [--check] [files...] (default: git's JS/TS files).
import fs from 'node:fs';
import {execFileSync} from 'node:child_process';
import ts from 'typescript';

const WIDTH = 120;
const check = process.argv.includes('--check');
const given = process.argv.slice(2).filter((a) => a !== '--check');
const DIRECTIVE = new RegExp(
  String.raw`^\s*(\/\/|\/\*|\*)\s*` +
    '(biome-ignore|@ts-|eslint|prettier-ignore|istanbul|c8 |#region|#endregion|<reference)' +
    String.raw`|^\s*\/\/\/`,
);

const width = (s) => [...s].length;

function sourceFiles() {
  const out = execFileSync('git', ['ls-files', '*.ts', '*.tsx', '*.js', '*.mjs', '*.cjs'], {encoding: 'utf8'});
  return out
    .split('\n')
    .filter(
      (f) =>
        f !== '' && !f.startsWith('test/fixtures/') && !f.startsWith('hosts-e2e/') && !/\.generated\.(d\.)?ts$/.test(f),
    );
}

function scriptKind(file) {
  if (file.endsWith('.tsx')) return ts.ScriptKind.TSX;
  if (/\.(m|c)?js$/.test(file)) return ts.ScriptKind.JS;
  return ts.ScriptKind.TS;
}

/** A JSDoc node: the parser's reading of a comment, not code. */
const isJsDoc = (node) => node.kind >= ts.SyntaxKind.FirstJSDocNode && node.kind <= ts.SyntaxKind.LastJSDocNode;

/** Every token of the file (not comments, not white space), in order: what a rewrite must keep. */
function tokens(file, text) {
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, scriptKind(file));
  const out = [];
  const visit = (node) => {
    if (isJsDoc(node)) return;
    const kids = node.getChildren(sf);
    if (kids.length === 0) {
      if (node.kind !== ts.SyntaxKind.EndOfFileToken) out.push(node.getText(sf));
      return;
    }
    for (const k of kids) visit(k);
  };
  visit(sf);
  return out;
}

/** Every comment of the file: [pos, end, kind], each once, none inside JSX text; and where tokens span lines. */
function comments(file, text) {
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, scriptKind(file));
  const seen = new Map();
  const spans = [];
  const add = (ranges) => {
    for (const r of ranges ?? []) seen.set(r.pos, r);
  };
  const visit = (node) => {
    if (node.kind === ts.SyntaxKind.JsxText || isJsDoc(node)) return;
    const kids = node.getChildren(sf);
    if (kids.length === 0) {
      if (text.slice(node.getStart(sf), node.end).includes('\n')) spans.push([node.getStart(sf), node.end]);
      add(ts.getLeadingCommentRanges(text, node.pos));
      add(ts.getTrailingCommentRanges(text, node.end));
      return;
    }
    for (const k of kids) visit(k);
  };
  visit(sf);
  return {
    list: [...seen.values()].sort((a, b) => a.pos - b.pos),
    inToken: (pos) => spans.some(([s, e]) => s < pos && pos < e),
  };
}

/** Words of `text` laid in lines of at most `room` columns (a longer word stands alone). */
function wrap(text, room) {
  const lines = [];
  let line = '';
  for (const word of text.split(' ').filter((w) => w !== '')) {
    if (line === '') line = word;
    else if (width(line) + 1 + width(word) <= room) line += ` ${word}`;
    else {
      lines.push(line);
      line = word;
    }
  }
  if (line !== '') lines.push(line);
  return lines;
}

function lineStartOf(text, pos) {
  return text.lastIndexOf('\n', pos - 1) + 1;
}

function lineEndOf(text, pos) {
  const n = text.indexOf('\n', pos);
  return n === -1 ? text.length : n;
}

/** The rewritten text of one file, and what was left wide. */
function rewrap(file, text) {
  const edits = [];
  const left = [];
  const note = (pos, why) => left.push(`${file}:${text.slice(0, pos).split('\n').length}: ${why}`);
  const found = comments(file, text);
  for (const c of found.list) {
    const start = lineStartOf(text, c.pos);
    const before = text.slice(start, c.pos);
    const body = text.slice(c.pos, c.end);
    const previousLine = start > 0 ? text.slice(lineStartOf(text, start - 1), start - 1) : '';
    if (c.kind === ts.SyntaxKind.SingleLineCommentTrivia) {
      const lineEnd = lineEndOf(text, c.pos);
      if (width(text.slice(start, lineEnd)) <= WIDTH) continue;
      if (DIRECTIVE.test(body)) {
        note(c.pos, 'a directive');
        continue;
      }
      const m = /^\/\/( *)(.*)$/.exec(body);
      const lead = m[1] === '' ? ' ' : m[1];
      const alone = /^\s*$/.test(before);
      const indent = alone ? before : /^\s*/.exec(before)[0];
      if (!alone && DIRECTIVE.test(previousLine)) {
        note(c.pos, 'after a directive');
        continue;
      }
      if (!alone && found.inToken(start)) {
        note(c.pos, 'after a string or template that spans lines');
        continue;
      }
      const words = wrap(m[2].trimEnd(), WIDTH - width(indent) - 2 - width(lead));
      if (words.some((w) => width(indent) + 2 + width(lead) + width(w) > WIDTH))
        note(c.pos, 'a word wider than the width');
      const block = words.map((w) => `${indent}//${lead}${w}`).join('\n');
      if (alone) edits.push({pos: start, end: c.end, text: block});
      else {
        // The code keeps its line; the comment goes just above it. White space before the comment goes too.
        const codeEnd = c.pos - (before.length - before.trimEnd().length);
        edits.push({pos: codeEnd, end: c.end, text: ''});
        edits.push({pos: start, end: start, text: `${block}\n`});
      }
      continue;
    }
    // A block comment: each of its lines wider than the width.
    const lines = body.split('\n');
    if (!lines.some((l, i) => width((i === 0 ? before : '') + l) > WIDTH)) continue;
    if (DIRECTIVE.test(body)) {
      note(c.pos, 'a directive');
      continue;
    }
    if (lines.length === 1) {
      const after = text.slice(c.end, lineEndOf(text, c.end));
      const m = /^\/\*(\*?) ?(.*?) ?\*\/$/.exec(body);
      if (!/^\s*$/.test(before) || !/^\s*$/.test(after) || !m) {
        note(c.pos, 'a block comment beside code');
        continue;
      }
      const words = wrap(m[2], WIDTH - width(before) - 3);
      edits.push({
        pos: c.pos,
        end: c.end,
        text: [`/*${m[1]}`, ...words.map((w) => `${before} * ${w}`), `${before} */`].join('\n'),
      });
      continue;
    }
    let fenced = false;
    let offset = c.pos;
    const out = [];
    for (const [i, l] of lines.entries()) {
      const full = (i === 0 ? before : '') + l;
      if (/^\s*\*?\s*```/.test(l)) fenced = !fenced;
      const m = /^(\s*\* ?)( *)(.*)$/.exec(l);
      if (i === 0 || width(full) <= WIDTH || fenced || !m || /^\s*\|/.test(m[3]) || m[3].startsWith('*/')) {
        if (width(full) > WIDTH) note(offset, fenced ? 'in a fence' : 'a block comment line it cannot split');
        out.push(l);
      } else {
        const [, prefix, extra, rest] = m;
        const closes = rest.endsWith('*/');
        const words = wrap(closes ? rest.slice(0, -2).trimEnd() : rest, WIDTH - width(prefix) - width(extra));
        if (words.some((w) => width(prefix) + width(extra) + width(w) > WIDTH))
          note(offset, 'a word wider than the width');
        const wrapped = words.map((w) => `${prefix}${extra}${w}`);
        if (closes) wrapped[wrapped.length - 1] += ' */';
        out.push(...wrapped);
      }
      offset += l.length + 1;
    }
    edits.push({pos: c.pos, end: c.end, text: out.join('\n')});
  }
  let next = text;
  for (const e of edits.sort((a, b) => b.pos - a.pos || b.end - a.end))
    next = next.slice(0, e.pos) + e.text + next.slice(e.end);
  return {next, left};
}

let changed = 0;
let failed = 0;
const wide = [];
for (const file of given.length > 0 ? given : sourceFiles()) {
  const text = fs.readFileSync(file, 'utf8');
  const {next, left} = rewrap(file, text);
  wide.push(...left);
  if (next === text) continue;
  const a = tokens(file, text);
  const b = tokens(file, next);
  if (a.length !== b.length || a.some((t, i) => t !== b[i])) {
    console.error(`${file}: the rewrap would change code, so the file is left as it was`);
    failed++;
    continue;
  }
  changed++;
  if (!check) fs.writeFileSync(file, next);
}
for (const w of wide) console.log(`left wide: ${w}`);
console.log(
  `${check ? 'would rewrap' : 'rewrapped'} comments in ${changed} files; ${wide.length} comment lines left wide`,
);
if (failed > 0 || (check && changed > 0)) process.exitCode = 1;
