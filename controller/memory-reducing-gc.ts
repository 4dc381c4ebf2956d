import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

type V8Gc = (options: { type: 'major'; execution: 'sync'; flavor: 'last-resort' }) => void;

/**
 * V8's memory-reducing collection (the one it runs before giving up on an allocation): full
 * collections until nothing more is freed, the young generation shrunk back to its initial size and
 * the old space compacted, the freed pages returned to the system. Without --expose-gc on the command
 * line: the flag is on only while a new context hands over its `gc` function.
 */
export function memoryReducingGc(): () => void {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as V8Gc;
  setFlagsFromString('--no-expose-gc');
  return () => gc({ type: 'major', execution: 'sync', flavor: 'last-resort' });
}
