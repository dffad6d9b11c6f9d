import { describe, expect, it } from 'vitest';
import { fillTemplate } from '../../src/core/plan/argv-template.js';
import { resolveSettings } from '../../src/core/settings/batch-settings.js';
import { BUILTIN_PROFILES, parseConfigText } from '../../src/core/settings/config.js';
import type { Config } from '../../src/core/settings/config.js';
import { isLanesError } from '../../src/core/basics/errors.js';
import { mergeLaneDirectives, parseLaneDirectives } from '../../src/core/settings/lane-directives.js';
import type { LaneDirectives } from '../../src/core/settings/lane-directives.js';
import { parsePlanText, planDigest } from '../../src/core/plan/plan.js';
import type { Plan } from '../../src/core/plan/plan.js';
import { planWithPreferences, resolvePreferences } from '../../src/core/settings/preferences.js';

// Executor preferences (src/core/preferences.ts, lane-directives.ts, argv-template.ts):
// pure functions, so plain values in and out; no files, no processes.

const plan = (extra: Record<string, unknown> = {}, child: Record<string, unknown> = {}): Plan =>
  parsePlanText(
    JSON.stringify({
      batch: 'b1',
      ...extra,
      children: [
        { id: 'T1', goal: 'g', scope: ['src'], acceptance: [{ id: 'A1', run: ['true'] }], ...child },
        { id: 'T2', goal: 'g', scope: ['doc'], acceptance: [{ id: 'A1', run: ['true'] }] },
      ],
    }),
    'plan.json',
  );
const config = (value: Record<string, unknown> = {}): Config =>
  parseConfigText(JSON.stringify(value), 'lanes.config.json');
const repo = (text: string): LaneDirectives => parseLaneDirectives(text, 'AGENTS.md');

function errorOf(fn: () => unknown): { code: string; message: string; exitCode: number } {
  try {
    fn();
  } catch (error) {
    if (isLanesError(error)) return error;
    throw error;
  }
  throw new Error('expected a lanes error');
}

describe('the precedence: command line > plan > config > AGENTS.md > default', () => {
  it('takes the default when nothing is said', () => {
    const p = resolvePreferences(plan(), config());
    expect(p.maxParallel).toMatchObject({ value: 2, label: 'default' });
    expect(p.children.T1).toMatchObject({
      executor: { value: 'claude', label: 'default' },
      model: null,
      effort: null,
      permissionMode: null,
    });
  });

  it('lets each source override the ones below it, and says which one gave a value', () => {
    const directives = repo(
      'Lane executor: claude\nLane executor model: haiku\nLane executor effort: low\nLane max parallel: 3\n',
    );
    const cfg = config({ max_parallel: 4, executors: { claude: { model: 'sonnet', effort: 'medium' } } });
    const fromRepo = resolvePreferences(plan(), config(), {}, directives);
    expect(fromRepo.children.T1!.model).toMatchObject({ value: 'haiku', label: 'AGENTS.md:2' });
    expect(fromRepo.maxParallel).toMatchObject({ value: 3, label: 'AGENTS.md:4' });
    const fromConfig = resolvePreferences(plan(), cfg, {}, directives);
    expect(fromConfig.children.T1!.model).toMatchObject({ value: 'sonnet', kind: 'config' });
    expect(fromConfig.children.T1!.effort).toMatchObject({ value: 'medium', kind: 'config' });
    expect(fromConfig.maxParallel).toMatchObject({ value: 4, label: 'config' });
    const fromPlan = resolvePreferences(
      plan({ model: 'opus', max_parallel: 5 }, { effort: 'high' }),
      cfg,
      {},
      directives,
    );
    expect(fromPlan.children.T1).toMatchObject({
      model: { value: 'opus', label: 'plan' },
      effort: { value: 'high', label: 'plan' },
    });
    // T2 has no effort of its own: the config's.
    expect(fromPlan.children.T2!.effort).toMatchObject({ value: 'medium', kind: 'config' });
    expect(fromPlan.maxParallel).toMatchObject({ value: 5, label: 'plan' });
    const fromCli = resolvePreferences(
      plan({ model: 'opus' }, { effort: 'high' }),
      cfg,
      { model: 'fable', effort: 'max', parallel: 6 },
      directives,
    );
    expect(fromCli.children.T1).toMatchObject({
      model: { value: 'fable', label: 'command line' },
      effort: { value: 'max', label: 'command line' },
    });
    expect(fromCli.maxParallel).toMatchObject({ value: 6, label: 'command line' });
  });

  it("keeps a child's own executor above --executor, and --executor above the plan's default", () => {
    const p = resolvePreferences(plan({ executor: 'aider' }, { executor: 'script', run: 'true' }), config(), {
      executor: 'codex',
    });
    expect(p.children.T1!.executor).toMatchObject({ value: 'script', kind: 'plan' });
    expect(p.children.T2!.executor).toMatchObject({ value: 'codex', kind: 'command line' });
  });

  it('takes the executor from the config, then from AGENTS.md', () => {
    const directives = repo('- Lane executor: codex');
    expect(resolvePreferences(plan(), config(), {}, directives).children.T1!.executor).toMatchObject({
      value: 'codex',
      label: 'AGENTS.md:1',
    });
    expect(
      resolvePreferences(plan(), config({ default_executor: 'aider' }), {}, directives).children.T1!.executor,
    ).toMatchObject({ value: 'aider', kind: 'config' });
  });
});

describe('a model or effort belongs to the executor its source chose', () => {
  it('does not pass an AGENTS.md model to an executor chosen by a higher source', () => {
    const directives = repo('Lane executor: claude\nLane executor model: opus\nLane executor effort: max\n');
    const p = resolvePreferences(plan(), config(), { executor: 'codex' }, directives);
    expect(p.children.T1).toMatchObject({ executor: { value: 'codex' }, model: null, effort: null });
    expect(p.children.T1!.unused).toEqual([
      'model opus (AGENTS.md:2) not used: executor codex is from command line',
      'effort max (AGENTS.md:3) not used: executor codex is from command line',
    ]);
  });

  it("does not pass the plan's model to an executor --executor chose, but --model goes with any", () => {
    const p = resolvePreferences(plan({ model: 'opus' }), config(), { executor: 'codex' });
    expect(p.children.T1!.model).toBeNull();
    const q = resolvePreferences(plan({ executor: 'codex' }), config(), { model: 'o9' });
    expect(q.children.T1!.model).toMatchObject({ value: 'o9', kind: 'command line' });
  });

  it("applies a profile's own model to that profile whichever source chose it", () => {
    const cfg = config({ executors: { codex: { model: 'o9', permission_mode: 'workspace-write' } } });
    const p = resolvePreferences(plan(), cfg, { executor: 'codex' }, repo('Lane executor model: gpt-x'));
    expect(p.children.T1).toMatchObject({
      model: { value: 'o9', label: 'config executors.codex' },
      permissionMode: { value: 'workspace-write', kind: 'config' },
    });
  });

  it('applies an AGENTS.md model to the default executor (no source chose another)', () => {
    const p = resolvePreferences(plan(), config(), {}, repo('Lane executor model: opus'));
    expect(p.children.T1!.model).toMatchObject({ value: 'opus', label: 'AGENTS.md:1' });
  });
});

describe('unknown executors and {run} profiles', () => {
  it('names the source that chose an unknown executor', () => {
    const err = errorOf(() => resolveSettings(plan(), config(), {}, repo('\n\nLane executor: nope')));
    expect(err.message).toContain('AGENTS.md:3: unknown executor profile "nope" (Lane executor)');
    expect(err.exitCode).toBe(2);
    expect(errorOf(() => resolveSettings(plan(), config(), { executor: 'nope' })).message).toContain(
      '--executor: unknown executor profile "nope"',
    );
  });
});

describe('the confirmed plan carries the resolved values', () => {
  it('writes executor, model and effort into each child, keeps the digest, and resolves the same again', () => {
    const original = plan({ executor: 'codex', model: 'opus' }, { effort: 'high' });
    const cli = { model: 'o9' };
    const prefs = resolvePreferences(original, config(), cli, repo('Lane max parallel: 3'));
    const confirmed = planWithPreferences(original, prefs);
    expect(confirmed.children[0]).toMatchObject({ executor: 'codex', model: 'o9', effort: 'high' });
    expect(confirmed.children[1]).toMatchObject({ executor: 'codex', model: 'o9' });
    expect(confirmed.children[1]!.effort).toBeUndefined();
    expect(planDigest(confirmed)).toBe(planDigest(original));
    const again = resolvePreferences(confirmed, config());
    for (const id of ['T1', 'T2'])
      for (const key of ['executor', 'model', 'effort'] as const)
        expect(again.children[id]![key]?.value).toBe(prefs.children[id]![key]?.value);
  });
});

describe('Lane directives in AGENTS.md / CLAUDE.md', () => {
  it('reads the four directives, as list items, in bold, any case, with backticks', () => {
    const d = repo(
      '# Notes\n\n- **Lane max parallel:** 3\n* lane EXECUTOR: `codex`\nLane Executor Model: gpt-5.1-codex\n  Lane executor effort:   high  \nLane window: 7\n',
    );
    expect(d).toEqual({
      maxParallel: { value: 3, where: 'AGENTS.md:3' },
      executor: { value: 'codex', where: 'AGENTS.md:4' },
      model: { value: 'gpt-5.1-codex', where: 'AGENTS.md:5' },
      effort: { value: 'high', where: 'AGENTS.md:6' },
    });
  });

  it.each([
    ['Lane max parallel: 0', 'AGENTS.md:1: "Lane max parallel: 0": must be a whole number > 0'],
    ['Lane max parallel: two', 'must be a whole number > 0'],
    ['Lane executor: ../sh', '"Lane executor: ../sh": must name an executor profile'],
    ['Lane executor model: opus 4', 'must be a model name'],
    ['Lane executor model:', 'must be a model name'],
    ['Lane executor effort: hgih', 'must be one of minimal, low, medium, high, xhigh, max'],
    [
      'Lane executor: claude\nLane executor: codex',
      'AGENTS.md:2: Lane executor is "codex" here but "claude" at AGENTS.md:1',
    ],
  ])('refuses %j', (text, fragment) => {
    const err = errorOf(() => repo(text));
    expect(err.code).toBe('directive_invalid');
    expect(err.exitCode).toBe(2);
    expect(err.message).toContain(fragment);
  });

  it('merges AGENTS.md and CLAUDE.md when they agree, and refuses when they do not', () => {
    const agents = parseLaneDirectives('Lane executor: claude\n', 'AGENTS.md');
    const same = parseLaneDirectives('Lane executor: claude\nLane executor effort: low\n', 'CLAUDE.md');
    expect(mergeLaneDirectives([agents, same])).toEqual({
      executor: { value: 'claude', where: 'AGENTS.md:1' },
      effort: { value: 'low', where: 'CLAUDE.md:2' },
    });
    const other = parseLaneDirectives('\nLane executor: codex\n', 'CLAUDE.md');
    expect(errorOf(() => mergeLaneDirectives([agents, other])).message).toContain(
      'CLAUDE.md:2: Lane executor is "codex" here but "claude" at AGENTS.md:1',
    );
  });
});

describe('argv templates: an unset placeholder drops its argument and its flag', () => {
  const values = { prompt: 'do it', prompt_file: '/p.md', task: 'T1', lane: '/l', run: 'x' };

  it('drops "--model {model}" as a pair, and a "-c key={effort}" pair', () => {
    const argv = ['agent', '--model', '{model}', '-c', 'effort="{effort}"', '--verbose', '{prompt}'];
    expect(fillTemplate(argv, values)).toEqual(['agent', '--verbose', 'do it']);
    expect(fillTemplate(argv, { ...values, model: 'opus', effort: 'high' })).toEqual([
      'agent',
      '--model',
      'opus',
      '-c',
      'effort="high"',
      '--verbose',
      'do it',
    ]);
  });

  it('drops a lone "--model={model}" argument and a positional "{model}" without touching what is before', () => {
    expect(fillTemplate(['a', '--model={model}', '{prompt}'], values)).toEqual(['a', 'do it']);
    expect(fillTemplate(['a', '--fast', 'x', '{model}'], values)).toEqual(['a', '--fast', 'x']);
    expect(fillTemplate(['a', '--fast', '{model}'], values)).toEqual(['a']);
  });

  it('never makes an empty argument of an unset value, and keeps one argument per argument', () => {
    const out = fillTemplate(['a', '--effort', '{effort}', '{prompt}'], {
      ...values,
      prompt: 'two words; $(rm x)',
    });
    expect(out).toEqual(['a', 'two words; $(rm x)']);
    expect(fillTemplate(['a', '--effort', '{effort}'], { ...values, effort: '' })).toEqual(['a']);
  });

  it('gives the built-in agents no bypass flag and only the flags of values that are set', () => {
    const claude = BUILTIN_PROFILES.claude!.argv;
    const codex = BUILTIN_PROFILES.codex!.argv;
    expect(fillTemplate(claude, values)).toEqual(['claude', 'do it']);
    expect(fillTemplate(codex, values)).toEqual(['codex', 'do it']);
    expect(
      fillTemplate(claude, { ...values, model: 'opus', effort: 'high', permission_mode: 'acceptEdits' }),
    ).toEqual(['claude', '--model', 'opus', '--effort', 'high', '--permission-mode', 'acceptEdits', 'do it']);
    expect(
      fillTemplate(codex, {
        ...values,
        model: 'o9',
        effort: 'low',
        permission_mode: 'workspace-write',
        approval_policy: 'on-request',
      }),
    ).toEqual([
      'codex',
      '--model',
      'o9',
      '-c',
      'model_reasoning_effort="low"',
      '--sandbox',
      'workspace-write',
      '-c',
      'approval_policy="on-request"',
      'do it',
    ]);
    for (const argv of [claude, codex]) expect(argv.join(' ')).not.toMatch(/dangerously|bypass/);
  });
});

describe('config: a profile named after a built-in one, without argv, extends it', () => {
  it('keeps the built-in argv and patterns and adds the values', () => {
    const cfg = config({ executors: { claude: { model: 'opus', permission_mode: 'acceptEdits' } } });
    expect(cfg.executors.claude).toMatchObject({
      argv: BUILTIN_PROFILES.claude!.argv,
      prompt_patterns: BUILTIN_PROFILES.claude!.prompt_patterns,
      model: 'opus',
      permission_mode: 'acceptEdits',
    });
  });

  it('still needs argv for a profile of its own, and checks the values', () => {
    expect(errorOf(() => config({ executors: { mine: { model: 'x' } } })).message).toContain(
      'executors.mine.argv',
    );
    expect(errorOf(() => config({ executors: { claude: { effort: 'hgih' } } })).message).toContain(
      'executors.claude.effort: must be one of',
    );
    expect(
      errorOf(() => config({ executors: { claude: { permission_mode: 'two words' } } })).message,
    ).toContain('executors.claude.permission_mode: must be one word');
  });
});
