/**
 * A preload for a child process (`node --import <this file's URL> ...`): appends the URL of every
 * module the process loads, one a line, to the file named by $STATICSITE_RECORD_LOADS. It sees ES
 * modules and CommonJS alike (module.registerHooks hooks both), on the main thread and in each worker
 * thread, which runs the `--import` preloads too. Without the variable it does nothing.
 * test/e2e/cli-loads.test.ts runs the built CLI with it.
 */
import { appendFileSync } from 'node:fs';
import { registerHooks } from 'node:module';

const file = process.env.STATICSITE_RECORD_LOADS;
if (file) {
  registerHooks({
    load(url, context, nextLoad) {
      appendFileSync(file, `${url}\n`);
      return nextLoad(url, context);
    },
  });
}
