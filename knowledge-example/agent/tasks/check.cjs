// The example tasks' checker, run by the agent evaluator in the task's workspace after the agent
// stopped (the evaluator copies it in then, so the agent never sees it): `node check.cjs <task>`.
// It reads the value the task asks for from the workspace's own files and passes (exit 0) when the
// last non-empty line of the agent's final answer (the file named by AUTOCTX_FINAL_ANSWER) is
// exactly "RESULT: <value>", the line the release bot reads; otherwise it fails (exit 1). It says
// why in one line either way. CommonJS, so it runs in any workspace whatever its package.json says.
const fs = require('node:fs');
const path = require('node:path');

const read = (file) => fs.readFileSync(file, 'utf8');
const filesUnder = (dir) =>
  fs.readdirSync(dir, {withFileTypes: true}).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? filesUnder(p) : [p];
  });

/** Each task's value, read from the workspace. */
const EXPECTED = {
  'pkg-version': () => JSON.parse(read('package.json')).version,
  'todo-count': () => String(filesUnder('src').reduce((n, f) => n + (read(f).match(/\bTODO\b/g) ?? []).length, 0)),
  'unexported-fn': () => {
    const text = read('src/math.js');
    const defined = [...text.matchAll(/^(export\s+)?function\s+(\w+)/gm)];
    const listed = [...text.matchAll(/^export\s*\{([^}]*)\}/gm)].flatMap((m) => m[1].split(',').map((s) => s.trim()));
    const hidden = defined.filter((m) => !m[1] && !listed.includes(m[2])).map((m) => m[2]);
    if (hidden.length !== 1) throw new Error(`src/math.js should define exactly one unexported function`);
    return hidden[0];
  },
  'default-port': () => String(JSON.parse(read('config/default.json')).server.port),
};

const task = process.argv[2];
const answerFile = process.env.AUTOCTX_FINAL_ANSWER;
if (!EXPECTED[task] || !answerFile) {
  console.log(`usage: AUTOCTX_FINAL_ANSWER=<file> node check.cjs ${Object.keys(EXPECTED).join('|')}`);
  process.exit(2);
}
const want = `RESULT: ${EXPECTED[task]()}`;
const lines = (fs.existsSync(answerFile) ? read(answerFile) : '').split('\n').map((l) => l.trim());
const last = lines.filter((l) => l !== '').pop() ?? '';
if (last === want) {
  console.log(`pass: the answer ends with "${want}"`);
  process.exit(0);
}
console.log(`fail: the answer should end with "${want}"; its last line is ${JSON.stringify(last.slice(0, 200))}`);
process.exit(1);
