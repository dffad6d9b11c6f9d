import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { badInput, ExitCode, isLanesError } from '../core/basics/errors.js';
import { planCheck } from './commands/plan-check.js';
import type { CommandContext } from './context.js';
import { hintsRunIn } from './lanes-command.js';

// The `lanes` command: global options, then one sub-command. Exit codes per DESIGN §9.
// Commands are imported when used (plan check stays eager: it is the one whose start-up
// time is measured): `plan check` starts without git, execa, the coordinator or node-pty.

const HELP = `lanes — run a plan of coding tasks in parallel git worktrees

usage: lanes [-C <dir>] <command> [options]

  init [<plan>] [--config]          write a commented starter plan (default plan.yaml) and, with
                                    --config, lanes.config.json with the built-in profiles
  plan check <plan>                 validate a plan and print its waves
  plan draft "<goal>" [--executor claude|codex] [-o <file>] [--rounds N] [--no-confirm]
                                    an agent (headless, read-only) drafts a plan for the goal;
                                    lanes checks it and sends the problems back until it passes;
                                    in a terminal the confirmation opens on it (e edits it)
  start <plan> [--parallel N] [--headless] [--host NAME] [--yes] [--executor NAME]
        [--model M] [--effort E] [--no-run] [--allow-overlap]
                                    confirm a plan and run the batch to its end (--allow-overlap:
                                    even when its scopes may overlap a batch under way here)
  resume [<batch>] [--headless] [--host ...] [--approve] [--replan <plan>] [--budget N]
         [--max-tokens N] [--parallel N]
                                    go on with a stopped batch (--approve: the fresh confirmation;
                                    --budget: a larger budget.max_children, --max-tokens: a larger
                                    budget.max_tokens, the one that is spent needed for budget_stopped)
  drop <batch> <child> [--reason TEXT]
                                    the child and its dependents leave the batch (state dropped;
                                    their work stays on their lane branches)
  cancel <batch> [--reason TEXT]    end the batch (state cancelled), running or not
  tick <batch> [--offer <child>=<path>] [--exited <child>[=<code>]] [--review <child>=approve|reject]
       [--approve [--replan <plan>]] [--json]
                                    run one core tick and print its report
  status [<batch>] [--json]         show a batch record and its last report
  log [<batch>] [--follow] [--json] [--task <child>]
                                    show the journal (--task: a lane's events and its transcripts)
  wait [<batch>] --until <state>[,<state>...] [--timeout S]
                                    block until the batch reaches a state (3: it stopped for a
                                    human first; 4: it ended in another state; 5: --timeout ran out)
  demo [--dir <dir>] [--headless] [--host ...]
                                    make a demo repo and plan (scripted executors) and run it
  land [<batch>] [--into <branch>] [--merge] [--push <remote>]
                                    move the base branch (or --into) to a completed batch's result
  clean [<batch>] [--force]         remove a batch's lanes, lane branches and state (the batch branch stays)
  hook <kind>                       (run by an agent's hook that lanes installed for its session)

  -C <dir>       run as if lanes was started in <dir>
  -h, --help     this help
  -V, --version  the version

exit codes: 0 done, 2 bad input (nothing written), 3 stopped for a human (needs_human,
budget_stopped, dispatch paused, interrupted), 4 ended otherwise (failed, rejected, cancelled),
5 wait --timeout ran out, 1 unexpected error

batch states: prepared running needs_human budget_stopped | completed failed rejected cancelled (terminal)
child states: pending lane_admitted enrolled settled lane_committed integrated released
              needs_human skipped_blocked dropped
`;

/**
 * `lanes <command> --help` (or -h): that command's lines of the usage. Null when the
 * arguments ask for no help (an option's value is never read as a request for help).
 */
function commandHelp(command: string, rest: string[]): string | null {
  const end = rest.indexOf('--');
  const args = end === -1 ? rest : rest.slice(0, end);
  if (!args.includes('--help') && !args.includes('-h')) return null;
  const name = command === 'plan' ? `plan ${rest[0] === 'draft' ? 'draft' : 'check'}` : command;
  const lines = HELP.split('\n');
  const first = lines.findIndex((l) => l === `  ${name}` || l.startsWith(`  ${name} `));
  if (first === -1) return null;
  let last = first + 1;
  while (last < lines.length && /^ {3,}\S/.test(lines[last]!)) last++;
  const block = lines.slice(first, last);
  return `usage: lanes ${block.join('\n').slice(2)}\n\n(lanes --help: every command, the exit codes and the states)\n`;
}

/** lanes' own package.json: the nearest one above this file that has a version (the bundle's folder has one that only says its files are CommonJS). */
function packageVersion(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 5; i++) {
    const file = join(dir, 'package.json');
    const version = existsSync(file)
      ? (JSON.parse(readFileSync(file, 'utf8')) as { version?: unknown }).version
      : undefined;
    if (typeof version === 'string') return version;
    dir = dirname(dir);
  }
  return 'unknown';
}

/**
 * A command that runs a batch starts the process helper (src/git/git-helper.ts) first: its
 * node start-up then overlaps the command's own module loading and plan reading.
 */
function warmHelper(): void {
  import('../git/runner/git-helper.js').then(
    (m) => m.processHelper()?.warm(),
    () => {}, // (the command's own first git call meets the same failure, and says it)
  );
}

/** Where relative paths start: INIT_CWD when run through `npm run lanes`, else the cwd. */
function startDir(): string {
  if (process.env.npm_lifecycle_event === 'lanes' && process.env.INIT_CWD) return process.env.INIT_CWD;
  return process.cwd();
}

export async function run(
  argv: string[],
  ctx: Omit<CommandContext, 'cwd'>,
  cwd = startDir(),
): Promise<number> {
  let dir = cwd;
  const args = [...argv];
  while (args[0] === '-C') {
    const target = args[1];
    if (target === undefined) throw badInput('usage', '-C needs a directory');
    dir = resolve(dir, target);
    if (!existsSync(dir) || !statSync(dir).isDirectory())
      throw badInput('usage', `-C ${target}: no such directory`);
    args.splice(0, 2);
  }
  const [command, ...rest] = args;
  const context: CommandContext = { ...ctx, cwd: dir };
  hintsRunIn(cwd, dir);
  const help = command ? commandHelp(command, rest) : null;
  if (help !== null) {
    ctx.stdout(help);
    return ExitCode.ok;
  }
  switch (command) {
    case undefined:
    case '-h':
    case '--help':
    case 'help':
      ctx.stdout(HELP);
      return command === undefined ? ExitCode.badInput : ExitCode.ok;
    case '-V':
    case '--version':
      ctx.stdout(`${packageVersion()}\n`);
      return ExitCode.ok;
    case 'plan':
      if (rest[0] === 'draft')
        return (await import('./draft/plan-draft.js')).planDraft(context, rest.slice(1));
      if (rest[0] !== 'check')
        throw badInput('usage', `usage: lanes plan check <plan> | lanes plan draft "<goal>"`);
      return planCheck(context, rest.slice(1));
    case 'init':
      return (await import('./commands/init.js')).initCommand(context, rest);
    case 'status':
      return (await import('./commands/status.js')).status(context, rest);
    case 'tick':
      return (await import('./commands/tick.js')).tickCommand(context, rest);
    case 'start':
      warmHelper();
      return (await import('./commands/start.js')).startCommand(context, rest);
    case 'resume':
      warmHelper();
      return (await import('./commands/resume.js')).resumeCommand(context, rest);
    case 'log':
      return (await import('./commands/log.js')).logCommand(context, rest);
    case 'wait':
      return (await import('./commands/wait.js')).waitCommand(context, rest);
    case 'demo':
      return (await import('./commands/demo.js')).demoCommand(context, rest);
    case 'drop':
      return (await import('./commands/drop.js')).dropCommand(context, rest);
    case 'cancel':
      return (await import('./commands/cancel.js')).cancelCommand(context, rest);
    case 'land':
      return (await import('./commands/land.js')).landCommand(context, rest);
    case 'clean':
      return (await import('./commands/clean.js')).cleanCommand(context, rest);
    case 'hook':
      return (await import('./commands/hook.js')).hookCommand(context, rest);
    default:
      throw badInput('usage', `unknown command "${command}" (see lanes --help)`);
  }
}

/**
 * One command to its exit code: a lanes error becomes its message and its code (2 for bad
 * input), anything else "unexpected error" with the stack and 1. What `lanes` does, and
 * what the tests run in-process.
 */
export async function runCommand(
  argv: string[],
  ctx: Omit<CommandContext, 'cwd'>,
  cwd?: string,
): Promise<number> {
  try {
    return await run(argv, ctx, cwd);
  } catch (error) {
    if (isLanesError(error)) {
      ctx.stderr(`lanes: ${error.message}\n`);
      return error.exitCode;
    }
    ctx.stderr(
      `lanes: unexpected error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    return ExitCode.unexpected;
  }
}
