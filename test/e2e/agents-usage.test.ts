import { readFileSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { agentBatch, journal, reworkScript } from '../helpers/agent-batch.js';
import { runCli } from '../helpers/repo.js';

// Tokens per lane (issue 27): the real agent CLIs run headless against the scripted model
// server, which reports usage numbers of the test's choosing; what `lanes status --json`
// and the journal carry equals the sums of what the server reported.

interface Usage {
  input_tokens: number;
  output_tokens: number;
  cost_usd: number | null;
}
interface StatusJson {
  usage: {
    total: Usage | null;
    children: Record<string, { usage: Usage | null; attempts: { n: number; usage: Usage | null }[] }>;
  };
}

describe.each(['claude', 'codex'] as const)('%s, headless: tokens per lane', (agent) => {
  it('status --json and the journal carry the sums of what the model server reported', async () => {
    const batch = `u-${agent}`;
    const script = { ...reworkScript(), usage: { input_tokens: 1234, output_tokens: 56 } };
    const b = await agentBatch(agent, { batch, script });
    const r = await runCli(['-C', b.repo, 'start', b.planFile, '--yes', '--headless'], { env: b.env });
    expect(r.exitCode, `${r.stdout}\n${r.stderr}`).toBe(0);
    const reported = b.server.reported();
    expect(reported.answers).toBeGreaterThan(3);
    const s = await runCli(['-C', b.repo, 'status', batch, '--json']);
    expect(s.exitCode, s.stderr).toBe(0);
    const { usage } = JSON.parse(s.stdout) as StatusJson;
    expect(usage.total).toMatchObject({
      input_tokens: reported.input_tokens,
      output_tokens: reported.output_tokens,
    });
    // Claude Code gives its own cost figure; Codex none.
    if (agent === 'claude') expect(usage.total!.cost_usd).toBeGreaterThan(0);
    else expect(usage.total!.cost_usd).toBeNull();
    // b's two attempts each carry their own.
    const bAttempts = usage.children.b!.attempts;
    expect(bAttempts).toHaveLength(2);
    expect(bAttempts.every((a) => a.usage !== null && a.usage.input_tokens > 0)).toBe(true);
    const sum = (key: 'input_tokens' | 'output_tokens') =>
      journal(b.repo, batch)
        .filter((e) => e.event === 'usage')
        .reduce((n, e) => n + (e[key] as number), 0);
    expect(sum('input_tokens')).toBe(reported.input_tokens);
    expect(sum('output_tokens')).toBe(reported.output_tokens);
  }, 120_000);
});

describe.each(['claude', 'codex'] as const)('%s, headless: budget.max_tokens', (agent) => {
  it('stops dispatching once the reported tokens reach it (budget_stopped), and resume --max-tokens goes on', async () => {
    const batch = `t-${agent}`;
    const ids = ['a', 'b', 'c'];
    const script = {
      tasks: ids.map((id) => ({
        match: `# Task ${id} (`,
        turns: [{ actions: [{ write: `src/${id}.txt`, content: 'right\n' }], say: 'Done.' }],
      })),
      usage: { input_tokens: 1000, output_tokens: 100 },
    };
    const b = await agentBatch(agent, { batch, script, maxParallel: 1 });
    const plan = JSON.parse(readFileSync(b.planFile, 'utf8')) as Record<string, unknown>;
    writeFileSync(b.planFile, JSON.stringify({ ...plan, budget: { max_tokens: 1500 } }));
    const r = await runCli(['-C', b.repo, 'start', b.planFile, '--yes', '--headless'], { env: b.env });
    expect(r.exitCode, `${r.stdout}\n${r.stderr}`).toBe(3);
    const first = JSON.parse(
      (await runCli(['-C', b.repo, 'status', batch, '--json'])).stdout,
    ) as StatusJson & {
      record: { batch_state: string; tokens_spent: number; children: { task_id: string; state: string }[] };
      report: { next_action: string };
    };
    expect(first.record.batch_state).toBe('budget_stopped');
    expect(first.record.children.map((c) => c.state)).toEqual(['released', 'pending', 'pending']);
    expect(first.record.tokens_spent).toBe(
      b.server.reported().input_tokens + b.server.reported().output_tokens,
    );
    expect(first.report.next_action).toContain(`lanes resume ${batch} --approve --max-tokens`);
    expect(journal(b.repo, batch).find((e) => e.event === 'batch-stopped')!.reason).toMatch(
      /token budget \(1500\) is spent/,
    );
    // Without a larger token budget the resume is refused, and with one it goes on.
    const refused = await runCli(['-C', b.repo, 'resume', batch, '--approve', '--headless'], { env: b.env });
    expect(refused.exitCode).toBe(2);
    expect(refused.stderr).toContain('--max-tokens');
    const on = await runCli(
      ['-C', b.repo, 'resume', batch, '--approve', '--max-tokens', '100000', '--headless'],
      {
        env: b.env,
      },
    );
    expect(on.exitCode, `${on.stdout}\n${on.stderr}`).toBe(0);
    const last = JSON.parse((await runCli(['-C', b.repo, 'status', batch, '--json'])).stdout) as StatusJson;
    const reported = b.server.reported();
    expect(last.usage.total).toMatchObject({
      input_tokens: reported.input_tokens,
      output_tokens: reported.output_tokens,
    });
  }, 120_000);
});
