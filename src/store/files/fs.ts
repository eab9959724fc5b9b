/**
 * The file system as the store uses it, one module per job: the root guard,
 * verify's snapshot cache, guarded reads, durable writes, fault injection and
 * the tree walk. Importers take them from here.
 */
export {RootGuard, exists, isDirectory} from './root-guard.js';
export {listDir, readBytes, withBytes} from './guarded-reads.js';
export {
  appendDurable,
  atomicWrite,
  createImmutable,
  fsyncDir,
  mkdirDurable,
  mkdirs,
  removeFile,
  writeTemp,
  type WriteData,
  type WriteOptions,
} from './durable-writes.js';
export {walkTree, type TreeEntry} from './tree-walk.js';
