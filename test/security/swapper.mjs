/**
 * The race tests' hostile process where no C compiler is installed: swaps a real folder and a
 * symlink by three renames in a loop (not atomic like renameat2, so some calls meet neither
 * name), for at most the given number of seconds. Usage: node swapper.mjs A B SECONDS.
 */
import fs from 'node:fs';

const [a, b, seconds] = process.argv.slice(2);
const tmp = `${a}.swap`;
const end = Date.now() + Number(seconds) * 1000;
let swaps = 0;
while (Date.now() < end || swaps % 2 === 1) {
  fs.renameSync(a, tmp);
  fs.renameSync(b, a);
  fs.renameSync(tmp, b);
  swaps++;
}
console.log(swaps);
