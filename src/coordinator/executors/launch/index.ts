// Starting an executor (DESIGN §7, executor), one module: the attempt (attempt-launch.ts:
// the launch prepared, the hook channel opened, the executor opened on the host, the
// attempt in the kernel) through the agent's launch (agent-launch.ts: its argv, prompt,
// hook token and session id) down to the argv of the executor profile (executor-launch.ts).
// Everything outside this folder imports it from here.

export { launchAttempt } from './attempt-launch.js';
export type { AttemptContext, AttemptMachines, Executor } from './attempt-launch.js';
export { readAgentOutput } from './agent-launch.js';
export { attemptFiles, fillArgv } from './executor-launch.js';
