// A hook the end-to-end tests register beside autoctx's: it keeps what the host sent on stdin,
// so that the contract fixtures (test/fixtures/hosts/) are the real programs' shapes.
import fs from 'node:fs';
import path from 'node:path';

const [dir, name] = process.argv.slice(2);
let input = '';
process.stdin.on('data', (d) => (input += d));
process.stdin.on('end', () => {
  fs.mkdirSync(dir, {recursive: true});
  fs.writeFileSync(path.join(dir, `${name}-${Date.now()}-${process.pid}.json`), input);
});
