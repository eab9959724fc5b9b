/** The nine component kinds, in manifest (UTF-16) order. */
export const COMPONENT_KINDS = [
  'completion_check',
  'context_policy',
  'harness_validator',
  'hints',
  'playbook',
  'prompt_fragment',
  'routing_config',
  'tool_guidance',
  'tool_spec',
] as const;

export type ComponentKind = (typeof COMPONENT_KINDS)[number];

export function isComponentKind(value: unknown): value is ComponentKind {
  return typeof value === 'string' && (COMPONENT_KINDS as readonly string[]).includes(value);
}

/** Media types the reference uses, and the file extension each maps to. */
export const MEDIA_TYPE_EXTENSIONS: Readonly<Record<string, string>> = {
  'text/markdown': '.md',
  'application/json': '.json',
  'text/x-python': '.py',
  'text/plain': '.txt',
};

/** Media type of a source file, from its extension. */
export function mediaTypeForExtension(ext: string): string {
  switch (ext.toLowerCase()) {
    case '.md':
      return 'text/markdown';
    case '.json':
      return 'application/json';
    case '.py':
      return 'text/x-python';
    default:
      return 'text/plain';
  }
}
