import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeRepo, runCli } from '../helpers/repo.js';

// Every stop says why where the user looks (issue 26): a headless run prints, at each QA
// failure, the check that failed with the tail of its output, or the paths outside the
// scope; a park prints its reason and the way on; `status` tells a batch nobody runs from
// a running one and names the command that goes on.

const PLAN = `batch: stops
max_parallel: 2
budget: { qa_failure_limit: 1 }
executor: script
children:
  - id: red
    goal: A check that fails
    scope: ["red.txt"]
    acceptance: [{ id: redcheck, run: ["sh", "-c", "echo first-line; echo boom-marker-42; exit 1"] }]
    run: "echo red > red.txt"
  - id: out
    goal: Writes outside its scope
    scope: ["out.txt"]
    acceptance: [{ id: ok, run: "true" }]
    run: "echo out > out.txt; echo x >> README.md"
`;

const REVIEW_PLAN = `batch: reviewed
executor: script
children:
  - id: rev
    goal: Needs a human review
    scope: ["rev.txt"]
    acceptance: [{ id: ok, run: "true" }]
    review: human
    run: "echo rev > rev.txt"
`;

describe('why a batch stopped', () => {
  it('headless prints the failing check with its tail, the paths outside the scope, and the way on', async () => {
    const repo = await makeRepo();
    writeFileSync(join(repo, '..', 'plan.yaml'), PLAN);
    const r = await runCli(['-C', repo, 'start', '../plan.yaml', '--yes', '--headless']);
    expect(r.exitCode).toBe(3);
    expect(r.stderr).toMatch(/red: QA failed: check redcheck exit 1/);
    expect(r.stderr).toContain('boom-marker-42');
    expect(r.stderr).toMatch(/out: QA failed: .*outside the scope: README\.md/);
    // Each park: its reason and the way on, as it happens (before the final report).
    const parked = r.stderr.split('\n').filter((l) => l.includes('→ red: '));
    expect(parked.length).toBe(1);
    expect(parked[0]).toMatch(/(lanes|node \S+main\.js)( -C \S+)? resume stops --approve/);
  });

  it('status tells a batch nobody runs from a running one and names the command that goes on', async () => {
    const repo = await makeRepo();
    writeFileSync(join(repo, '..', 'plan.yaml'), REVIEW_PLAN);
    const r = await runCli(['-C', repo, 'start', '../plan.yaml', '--yes', '--headless']);
    expect(r.stderr).toMatch(/(lanes|main\.js)( -C \S+)? tick reviewed --review rev=approve\|reject/);
    const s = await runCli(['-C', repo, 'status']);
    expect(s.exitCode).toBe(0);
    expect(s.stdout).toContain('running — stopped: no lanes process runs it');
    expect(s.stdout).toMatch(
      /next: (lanes|node \S+main\.js)( -C \S+)? tick reviewed --review rev=approve\|reject/,
    );
    expect(s.stdout).not.toContain('Act on the handoffs');
  });
});
