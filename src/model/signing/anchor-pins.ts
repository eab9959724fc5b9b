/**
 * What an allowed signers anchor may pin beyond its keys: comment lines
 * `# autoctx-chain <scenario> <sha256>`, each naming a change of that
 * scenario's signed state chain the tree must still reach (ssh-keygen reads
 * them as comments). The keys are the rest of the file, byte for byte, which
 * must be a version of the scenario's allowed_signers. Pure.
 */
const PIN = /^#[ \t]*autoctx-chain[ \t]+(\S+)[ \t]+([0-9a-f]{64})[ \t]*$/;

function lines(text: string): string[] {
  return text.split(/(?<=\n)/);
}

/** The pinned chain change of each scenario the anchor names. */
export function anchorPins(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of lines(text)) {
    const m = PIN.exec(line.replace(/\r?\n$/, ''));
    if (m) out.set(m[1]!, m[2]!);
  }
  return out;
}

/** The anchor's allowed signers: its text without the pin lines. */
export function anchorSigners(text: string): string {
  return lines(text)
    .filter((line) => !PIN.test(line.replace(/\r?\n$/, '')))
    .join('');
}
