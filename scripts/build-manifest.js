// Writes oclif.manifest.json from the compiled commands, so that --help and
// each command load without importing every command file. Run by `npm run build`.
import {writeFileSync} from 'node:fs';
import {Config} from '@oclif/core';

const config = await Config.load({root: process.cwd()});
const manifest = config.rootPlugin.manifest;
if (!manifest || Object.keys(manifest.commands).length === 0) throw new Error('no commands found for the manifest');
writeFileSync('oclif.manifest.json', `${JSON.stringify(manifest, null, 2)}\n`);
console.log(`oclif.manifest.json: ${Object.keys(manifest.commands).length} commands`);
