import * as jsoncModule from 'jsonc-parser';

/**
 * jsonc-parser as either loader gives it: Node's CommonJS interop (its UMD main, under default) or the bundle's ES
 * build.
 */
export const jsonc = (Reflect.get(jsoncModule, 'default') ?? jsoncModule) as typeof jsoncModule;

/**
 * Edits of a JSON file that people keep by hand (a host's settings, the
 * user's configuration): each changes only the bytes of the value it sets,
 * inserts or removes, written in the indentation of where it goes, so that
 * every other byte of the file stays as it was. jsonc-parser finds the
 * nodes; its own formatter would reformat the neighbouring lines.
 */
type Path = Array<string | number>;

function lineIndent(text: string, offset: number): string {
  const start = text.lastIndexOf('\n', offset - 1) + 1;
  return /^[ \t]*/.exec(text.slice(start))![0];
}

/** The file's indentation step: the first indented line's, else two spaces. */
function step(text: string): string {
  return /\n([ \t]+)\S/.exec(text)?.[1] ?? '  ';
}

function pretty(value: unknown, indent: string, unit: string): string {
  return JSON.stringify(value, null, unit).split('\n').join(`\n${indent}`);
}

function node(text: string, path: Path): jsoncModule.Node | undefined {
  const tree = jsonc.parseTree(text);
  return tree ? jsonc.findNodeAtLocation(tree, path) : undefined;
}

const splice = (text: string, at: number, remove: number, insert: string) =>
  text.slice(0, at) + insert + text.slice(at + remove);

/** Set `key` of the object at `path` to `value`: its value replaced in place, or a new last member. */
export function setMember(text: string, path: Path, key: string, value: unknown): string {
  const unit = step(text);
  const object = node(text, path);
  if (!object || object.type !== 'object') throw new Error(`no object at ${JSON.stringify(path)}`);
  const member = object.children?.find((p) => p.children?.[0]?.value === key);
  if (member) {
    const v = member.children![1]!;
    return splice(text, v.offset, v.length, pretty(value, lineIndent(text, member.offset), unit));
  }
  const last = object.children?.at(-1);
  if (last) {
    const indent = lineIndent(text, last.offset);
    return splice(
      text,
      last.offset + last.length,
      0,
      `,\n${indent}${JSON.stringify(key)}: ${pretty(value, indent, unit)}`,
    );
  }
  // An empty object: its braces on the lines they are on.
  const indent = lineIndent(text, object.offset);
  return splice(
    text,
    object.offset,
    object.length,
    `{\n${indent}${unit}${JSON.stringify(key)}: ${pretty(value, indent + unit, unit)}\n${indent}}`,
  );
}

/** Set the value at `path` (object members made as needed). */
export function setPath(text: string, path: Path, value: unknown): string {
  for (let i = 0; i < path.length - 1; i++) {
    const at = node(text, path.slice(0, i + 1));
    if (!at) return setMember(text, path.slice(0, i), String(path[i]), nest(path.slice(i + 1), value));
  }
  return setMember(text, path.slice(0, -1), String(path.at(-1)), value);
}

function nest(path: Path, value: unknown): unknown {
  return path.reduceRight<unknown>((v, k) => ({[String(k)]: v}), value);
}

/** Remove the member `key` of the object at `path`, with its comma. */
export function removeMember(text: string, path: Path, key: string): string {
  const object = node(text, path);
  const i = (object?.children ?? []).findIndex((p) => p.children?.[0]?.value === key);
  return object && i >= 0 ? removeAt(text, object, i) : text;
}

/** Append `value` to the array at `path` (made as a member when missing). */
export function appendElement(text: string, path: Path, value: unknown): string {
  const unit = step(text);
  const array = node(text, path);
  if (!array) return setPath(text, path, [value]);
  if (array.type !== 'array') throw new Error(`no array at ${JSON.stringify(path)}`);
  const last = array.children?.at(-1);
  if (last) {
    const indent = lineIndent(text, last.offset);
    return splice(text, last.offset + last.length, 0, `,\n${indent}${pretty(value, indent, unit)}`);
  }
  const indent = lineIndent(text, array.offset);
  return splice(
    text,
    array.offset,
    array.length,
    `[\n${indent}${unit}${pretty(value, indent + unit, unit)}\n${indent}]`,
  );
}

/** Replace element `index` of the array at `path`. */
export function replaceElement(text: string, path: Path, index: number, value: unknown): string {
  const el = node(text, [...path, index]);
  if (!el) throw new Error(`no element ${index} at ${JSON.stringify(path)}`);
  return splice(text, el.offset, el.length, pretty(value, lineIndent(text, el.offset), step(text)));
}

/** Remove element `index` of the array at `path`, with its comma. */
export function removeElement(text: string, path: Path, index: number): string {
  const array = node(text, path);
  return array?.children?.[index] ? removeAt(text, array, index) : text;
}

/**
 * Cut child i out of its parent's list: from the end of the one before (or to the start of the one after) so one comma
 * goes; the only child leaves [] or {}.
 */
function removeAt(text: string, parent: jsoncModule.Node, i: number): string {
  const children = parent.children ?? [];
  const child = children[i]!;
  if (children.length === 1) return splice(text, parent.offset + 1, parent.length - 2, '');
  if (i > 0) {
    const prev = children[i - 1]!;
    const from = prev.offset + prev.length;
    return splice(text, from, child.offset + child.length - from, '');
  }
  const next = children[1]!;
  return splice(text, child.offset, next.offset - child.offset, '');
}
