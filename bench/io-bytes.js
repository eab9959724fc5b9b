// Preloaded with `node --import` by the benchmark: at exit, writes the process's
// /proc/self/io counters (wchar: bytes passed to write calls, pipes included;
// write_bytes: bytes the process sent to storage) as JSON to $AUTOCTX_IO_FILE.
import {readFileSync, writeFileSync} from 'node:fs';

const file = process.env.AUTOCTX_IO_FILE;
if (file)
  process.on('exit', () => {
    const io = Object.fromEntries(
      readFileSync('/proc/self/io', 'utf8')
        .trim()
        .split('\n')
        .map((l) => l.split(': '))
        .map(([k, v]) => [k, Number(v)]),
    );
    writeFileSync(file, JSON.stringify(io));
  });
