import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../src/core/basics/canonical-json.js';
import { parseConfigText } from '../../src/core/settings/config.js';
import { parsePlanText, planDigest } from '../../src/core/plan/plan.js';
import { makeRepo } from '../helpers/repo.js';
import { lanesInProcess } from '../e2e/reliability/support.js';

// `final_checks` in the plan (same shape as acceptance, in the digest) and in the config.

const base = {
  batch: 'b1',
  children: [{ id: 'T1', goal: 'g', scope: ['src/**'], acceptance: [{ id: 'A', run: ['true'] }] }],
};
const parse = (plan: object) => parsePlanText(JSON.stringify(plan), 'plan.json');

describe('final_checks', () => {
  it('leaves the digest of a plan without them as it was: sha256 of the canonical children', () => {
    const children = [
      {
        id: 'T1',
        goal: 'g',
        blocked_by: [],
        scope: ['src/**'],
        acceptance: [{ id: 'A', run: ['true'], timeout_ms: 600000 }],
      },
    ];
    const before = createHash('sha256').update(canonicalJson(children)).digest('hex');
    expect(planDigest(parse(base))).toBe(before);
  });

  it('is part of the digest, with the default timeout', () => {
    const withChecks = parse({ ...base, final_checks: [{ id: 'F', run: 'npm test' }] });
    expect(planDigest(withChecks)).not.toBe(planDigest(parse(base)));
    expect(planDigest(withChecks)).toBe(
      planDigest(parse({ ...base, final_checks: [{ run: 'npm test', timeout_ms: 600000, id: 'F' }] })),
    );
    expect(planDigest(withChecks)).not.toBe(
      planDigest(parse({ ...base, final_checks: [{ id: 'F', run: 'npm test -- -x' }] })),
    );
    expect(withChecks.final_checks?.[0]?.timeout_ms).toBe(600000);
  });

  it('is refused empty, with duplicate ids, or with a bad check, naming the field', () => {
    expect(() => parse({ ...base, final_checks: [] })).toThrow(/final_checks/);
    expect(() =>
      parse({
        ...base,
        final_checks: [
          { id: 'F', run: 'a' },
          { id: 'F', run: 'b' },
        ],
      }),
    ).toThrow(/final_checks\[1\]\.id: duplicate check id "F"/);
    expect(() => parse({ ...base, final_checks: [{ id: 'F', run: [] }] })).toThrow(/final_checks\[0\]\.run/);
  });

  it('has a default in the config', () => {
    const config = parseConfigText(
      JSON.stringify({ final_checks: [{ id: 'suite', run: ['npm', 'test'] }] }),
      'c',
    );
    expect(config.final_checks).toEqual([{ id: 'suite', run: ['npm', 'test'], timeout_ms: 600000 }]);
    expect(parseConfigText('{}', 'c').final_checks).toEqual([]);
    expect(() => parseConfigText(JSON.stringify({ final_checks: [{ id: 'x' }] }), 'c')).toThrow(
      /final_checks/,
    );
  });
});

describe('plan check', () => {
  it("names the final checks, the plan's or the config's", async () => {
    const repo = await makeRepo();
    const plan = join(repo, 'p.json');
    writeFileSync(plan, JSON.stringify({ ...base, final_checks: [{ id: 'suite', run: 'true' }] }));
    const own = await lanesInProcess(['-C', repo, 'plan', 'check', plan]);
    expect(own.stdout).toContain('final checks: suite');
    writeFileSync(plan, JSON.stringify(base));
    writeFileSync(
      join(repo, 'lanes.config.json'),
      JSON.stringify({ final_checks: [{ id: 'all', run: 'true' }] }),
    );
    const fromConfig = await lanesInProcess(['-C', repo, 'plan', 'check', plan]);
    expect(fromConfig.stdout).toContain('final checks (from the config): all');
  });
});
