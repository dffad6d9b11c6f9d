import { BUILTIN_PROFILES, DEFAULT_CONFIG } from '../core/settings/config.js';

// What `lanes init` writes (docs/DECISIONS.md "lanes init"): a starter plan that names every
// field of the plan (a field it leaves unset is a commented-out line `# field: value`, so
// deleting the `# ` gives a valid plan), and a config with the built-in profiles spelled out.

export const STARTER_PLAN = `# A lanes plan (README "Writing a plan"; the format: docs/DESIGN.md §2.1).
# Check it with \`lanes plan check <this file>\`; run it with \`lanes start <this file>\`.

# The batch id: names the record, the branch batch/<batch> and the lane branches.
batch: starter
# The commit the batch starts from (a branch, tag or sha), resolved at confirmation.
base: HEAD
# How many children run at once (default: the config, AGENTS.md / CLAUDE.md, or 2).
# max_parallel: 2
# Limits: how many children the batch may start, the QA failures a child may have, and
# the tokens the agents may report spent before no new lane starts (budget_stopped).
# budget:
#   max_children: 10
#   qa_failure_limit: 3
#   max_tokens: 2000000
# The executor profile of every child that names none (a built-in one: claude, codex,
# aider, script; or one of lanes.config.json's executors).
executor: script
# Preferences handed to an agent executor: its model and its reasoning effort
# (minimal, low, medium, high, xhigh, max).
# model: sonnet
# effort: medium
children:
  # A child that runs a shell command (executor script): its run: is run with sh -c in
  # the child's own worktree, and its checks prove the work.
  - id: hello
    goal: Write hello.txt
    # The paths the child may change (globs, relative to the repository root).
    scope: ['hello.txt']
    # Checks that prove the child done: a command string (sh -c) or an argv list, each
    # with an id; timeout_ms defaults to 600000.
    acceptance:
      - id: says-hello
        run: 'grep -q hello hello.txt'
        timeout_ms: 10000
    run: 'echo hello > hello.txt'
  # A child done by an agent: lanes writes its prompt from the goal, the scope and the
  # checks (prompt: adds to it), and starts the agent in the child's worktree.
  - id: shout
    goal: Write HELLO.txt, the contents of hello.txt in capitals
    # Children that must be integrated before this one starts.
    blocked_by: [hello]
    scope: ['HELLO.txt']
    acceptance:
      - { id: upper, run: ['grep', '-q', 'HELLO', 'HELLO.txt'] }
    executor: claude
    # model: sonnet
    # effort: high
    prompt: Keep every other file as it is.
    # With review set to human, the child waits for a person's approval (lanes tick
    # --review) before it is integrated.
    # review: human
    # With machines in lanes.config.json, the one this child runs on (it waits for a slot
    # there, and is never started elsewhere).
    # machine: build-box
# Checks of the whole batch, run on the batch tip once every child is integrated
# (default: the config's final_checks).
# final_checks:
#   - { id: both, run: 'test -f hello.txt && test -f HELLO.txt', timeout_ms: 10000 }
`;

/** lanes.config.json with its defaults and the built-in executor profiles written out. */
export function starterConfig(): string {
  const { executors: _none, ...defaults } = DEFAULT_CONFIG;
  return `${JSON.stringify({ executors: BUILTIN_PROFILES, ...defaults }, null, 2)}\n`;
}
