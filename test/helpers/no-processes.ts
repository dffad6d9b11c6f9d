import { createRequire, syncBuiltinESMExports } from 'node:module';

// The setup of `npm run test:unit`: a unit test starts no process (no git, no shell, no
// bundle). Every way node:child_process starts one throws here, so a test that needs a
// real process belongs beside the integration tests (a `.test.ts` without `.unit`).

const require = createRequire(import.meta.url);
const childProcess = require('node:child_process') as Record<string, unknown>;
for (const name of ['spawn', 'spawnSync', 'exec', 'execSync', 'execFile', 'execFileSync', 'fork']) {
  childProcess[name] = () => {
    throw new Error(
      `a unit test starts no process (child_process.${name}): name the file .test.ts, not .unit.test.ts`,
    );
  };
}
syncBuiltinESMExports();
