// Preloaded with `node --import` by the memory test and the benchmark: at exit,
// writes the process's peak resident set size in bytes to $AUTOCTX_MAX_RSS_FILE.
import {writeFileSync} from 'node:fs';

const file = process.env.AUTOCTX_MAX_RSS_FILE;
if (file) process.on('exit', () => writeFileSync(file, String(process.resourceUsage().maxRSS * 1024)));
