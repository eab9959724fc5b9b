// Compiles every JSON Schema in schemas/ into one standalone ESM module of
// validators (dist/store/validators.generated.js), so that a command validates
// what it reads without loading and compiling Ajv at start-up. Run by `npm run build`.
import {readFileSync, readdirSync, writeFileSync} from 'node:fs';
import path from 'node:path';
import {Ajv2020} from 'ajv/dist/2020.js';
import standaloneCode from 'ajv/dist/standalone/index.js';

const BASE = 'https://autoctx.dev/schemas/';
const dir = 'schemas';
const ajv = new Ajv2020({strict: true, allErrors: false, validateFormats: false, inlineRefs: false, code: {source: true, esm: true, lines: false}});
const names = [];
for (const file of readdirSync(dir).filter((f) => f.endsWith('.schema.json')).sort()) {
  ajv.addSchema(JSON.parse(readFileSync(path.join(dir, file), 'utf8')));
  names.push(file.slice(0, -'.schema.json'.length));
}
const exported = Object.fromEntries(names.filter((n) => n !== 'common').map((n) => [n.replace(/-/g, '_'), `${BASE}${n}.schema.json`]));
let code = standaloneCode(ajv, exported);
code += `\nexport default {${names.filter((n) => n !== 'common').map((n) => `${JSON.stringify(n)}: ${n.replace(/-/g, '_')}`).join(', ')}};\n`;
writeFileSync(path.join('dist', 'store', 'validators.generated.js'), code);
console.log(`validators.generated.js: ${Object.keys(exported).length} validators, ${code.length} bytes`);
