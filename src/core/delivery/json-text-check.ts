import {jsonc} from './json-text-edit.js';

/** jsonc-parser's token kinds (its SyntaxKind, a const enum its typings declare but isolated modules cannot read). */
const TOKEN = {openBrace: 1, closeBrace: 2, openBracket: 3, closeBracket: 4, comma: 5, string: 10, eof: 17} as const;

/** Deeper than this, a settings file is not one a person keeps (autoctx's own JSON reader stops at the same depth). */
export const MAX_SETTINGS_DEPTH = 256;

/**
 * What makes a JSON (with comments) file that people keep by hand unsafe for
 * autoctx to edit, before anything parses it: nesting deeper than
 * MAX_SETTINGS_DEPTH (a recursive parser would run out of stack), or a key
 * given twice in one object, at any depth (readers disagree on which copy
 * counts: the hosts keep the last, a text edit finds the first). One pass over
 * the tokens, no recursion. Null when neither; syntax is the parser's to judge.
 */
export function jsonTextProblem(text: string): string | null {
  const scanner = jsonc.createScanner(text, false);
  type Frame = {keys: Set<string> | null; wantKey: boolean; at: string};
  const stack: Frame[] = [];
  let path = '';
  for (let token: number = scanner.scan(); token !== TOKEN.eof; token = scanner.scan()) {
    const top = stack.at(-1);
    switch (token) {
      case TOKEN.openBrace:
      case TOKEN.openBracket:
        if (stack.length >= MAX_SETTINGS_DEPTH) return `nesting deeper than ${MAX_SETTINGS_DEPTH} levels`;
        stack.push({keys: token === TOKEN.openBrace ? new Set() : null, wantKey: true, at: path});
        break;
      case TOKEN.closeBrace:
      case TOKEN.closeBracket:
        path = stack.pop()?.at ?? '';
        break;
      case TOKEN.comma:
        if (top) top.wantKey = true;
        break;
      case TOKEN.string:
        if (top?.keys && top.wantKey) {
          const key = scanner.getTokenValue();
          path = `${top.at}${top.at === '' ? '' : '.'}${key}`;
          if (top.keys.has(key)) return `the key ${JSON.stringify(key)} appears twice in one object (at ${path})`;
          top.keys.add(key);
          top.wantKey = false;
        }
        break;
      default:
        break;
    }
  }
  return null;
}
