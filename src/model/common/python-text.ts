/**
 * Python's notion of whitespace (str.isspace), for the texts the Python
 * implementation derives with str.rstrip() and str.strip(): JavaScript's
 * trimEnd() strips U+FEFF, which Python keeps, and keeps U+001C–U+001F and
 * U+0085, which Python strips.
 */
const PYTHON_SPACE = new Set([
  0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x1c, 0x1d, 0x1e, 0x1f, 0x20, 0x85, 0xa0, 0x1680, 0x2000, 0x2001, 0x2002, 0x2003,
  0x2004, 0x2005, 0x2006, 0x2007, 0x2008, 0x2009, 0x200a, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000,
]);

export function isPythonSpace(code: number): boolean {
  return PYTHON_SPACE.has(code);
}

/** str.rstrip() with no argument. */
export function pythonRstrip(text: string): string {
  let end = text.length;
  while (end > 0 && PYTHON_SPACE.has(text.charCodeAt(end - 1))) end--;
  return text.slice(0, end);
}

/** str.strip() == "" */
export function isPythonBlank(text: string): boolean {
  return pythonRstrip(text).length === 0;
}
