// Compiles every JSON Schema in schemas/ into one standalone ESM module of
// validators (dist/store/validators.generated.js), so that a command validates
// what it reads without loading and compiling Ajv at start-up. Run by `npm run build`.
import {readFileSync, readdirSync, writeFileSync} from 'node:fs';
import path from 'node:path';
import {Ajv2020} from 'ajv/dist/2020.js';
import standaloneCode from 'ajv/dist/standalone/index.js';
import {documentSchemas} from './gen-schema-names.js';

const BASE = 'https://autoctx.dev/schemas/';
const dir = 'schemas';
const ajv = new Ajv2020({
  strict: true,
  allErrors: false,
  validateFormats: false,
  inlineRefs: false,
  code: {source: true, esm: true, lines: false},
});
// An annotation: the agent-host hook reads documents of this schema (scripts/gen-schema-names.js).
ajv.addKeyword({keyword: 'x-autoctx-hook', schemaType: 'boolean'});
const names = [];
for (const file of readdirSync(dir)
  .filter((f) => f.endsWith('.schema.json'))
  .sort()) {
  ajv.addSchema(JSON.parse(readFileSync(path.join(dir, file), 'utf8')));
  names.push(file.slice(0, -'.schema.json'.length));
}
// Two modules: the file kinds every command reads, and the --json results, which only the tests check.
function emit(file, selected) {
  const exported = Object.fromEntries(selected.map((n) => [n.replace(/-/g, '_'), `${BASE}${n}.schema.json`]));
  const code =
    `${standaloneCode(ajv, exported)}\nexport default ` +
    `{${selected.map((n) => `${JSON.stringify(n)}: ${n.replace(/-/g, '_')}`).join(', ')}};\n`;
  if (/require\(/.test(code))
    throw new Error(
      'generated validators must not need a runtime require; keep minLength and formats out of the schemas',
    );
  writeFileSync(path.join('dist', 'store', file), code);
  console.log(`${file}: ${selected.length} validators, ${code.length} bytes`);
}
const usable = names.filter((n) => n !== 'common');
emit(
  'validators.generated.js',
  usable.filter((n) => !n.startsWith('result-')),
);
// The agent-host hook reads only the schemas marked `"x-autoctx-hook": true` (delivery, routing and the documents
// under them); its bundle takes this module instead (scripts/bundle.js), so a hook does not load the evaluation and
// evidence validators it never runs. A schema left unmarked is a hook failure (no output, exit 0), which the hook
// tests would show.
const HOOK_SCHEMAS = documentSchemas()
  .filter(([, hook]) => hook)
  .map(([n]) => n);
emit('validators.hook.generated.js', HOOK_SCHEMAS);
emit(
  'result-validators.generated.js',
  usable.filter((n) => n.startsWith('result-')),
);
