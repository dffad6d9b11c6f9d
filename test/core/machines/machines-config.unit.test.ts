import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LanesError } from '../../../src/core/basics/errors.js';
import { planDigest, parsePlanText } from '../../../src/core/plan/plan.js';
import { resolveSettings } from '../../../src/core/settings/batch-settings.js';
import { DEFAULT_CONFIG, parseConfigText } from '../../../src/core/settings/config.js';

// The machines of lanes.config.json (docs/DECISIONS.md, "Machines: placement"): the corpus
// of bad ones (test/corpus/configs 30-40, run through every command by
// test/e2e/reliability/bad-files.test.ts) read here by the parser itself, and the good ones.

const CONFIGS = join(import.meta.dirname, '..', '..', 'corpus', 'configs');
const machineCorpus = readdirSync(CONFIGS)
  .filter((n) => n.endsWith('.json') && Number(n.slice(0, 2)) >= 30)
  .sort();

function refusal(text: string): LanesError {
  try {
    parseConfigText(text, 'lanes.config.json');
  } catch (error) {
    if (error instanceof LanesError) return error;
    throw error;
  }
  throw new Error('the config was accepted');
}

describe('machines in the config', () => {
  it('has the corpus of bad machines', () => expect(machineCorpus.length).toBeGreaterThanOrEqual(11));

  it.each(machineCorpus)('%s is refused naming the field, exit 2', (name) => {
    const error = refusal(readFileSync(join(CONFIGS, name), 'utf8'));
    const expected = readFileSync(join(CONFIGS, name.replace(/\.json$/, '.expect')), 'utf8').trim();
    expect(error.message).toContain(expected);
    expect(error.exitCode).toBe(2);
    expect(error.code).toBe('config_invalid');
  });

  it('without machines: everything local, ssh and the timeout at their defaults', () => {
    expect(DEFAULT_CONFIG.machines).toBeUndefined();
    expect(DEFAULT_CONFIG.ssh_command).toEqual(['ssh']);
    expect(DEFAULT_CONFIG.machine_timeout).toBe(10);
  });

  it('reads a pool of machines, local among them', () => {
    const config = parseConfigText(
      JSON.stringify({
        machines: [
          { name: 'local', slots: 2 },
          { name: 'box-1', ssh: 'ssh://me@box:2222', slots: 4, root: '/srv/lanes', env: { A: 'b' } },
          { name: 'box-2', ssh: 'buildhost', slots: 1 },
        ],
        ssh_command: ['ssh', '-F', '/home/me/.ssh/lanes_config'],
        machine_timeout: 2.5,
      }),
      'lanes.config.json',
    );
    expect(config.machines?.map((m) => [m.name, m.slots])).toEqual([
      ['local', 2],
      ['box-1', 4],
      ['box-2', 1],
    ]);
    expect(config.machines?.[1]).toMatchObject({ root: '/srv/lanes', env: { A: 'b' } });
    expect(config.ssh_command).toEqual(['ssh', '-F', '/home/me/.ssh/lanes_config']);
    expect(config.machine_timeout).toBe(2.5);
  });
});

describe("a child's machine: pin, where plan and config meet", () => {
  const plan = (machine?: string) =>
    parsePlanText(
      JSON.stringify({
        batch: 'b1',
        children: [
          { id: 'T1', goal: 'g', scope: ['a'], acceptance: [{ id: 'A1', run: ['true'] }], executor: 'x' },
          {
            id: 'T2',
            goal: 'g',
            scope: ['b'],
            acceptance: [{ id: 'A1', run: ['true'] }],
            executor: 'x',
            ...(machine ? { machine } : {}),
          },
        ],
      }),
      'plan.json',
    );
  const config = (machines?: object[]) =>
    parseConfigText(
      JSON.stringify({ executors: { x: { argv: ['true'] } }, ...(machines ? { machines } : {}) }),
      'lanes.config.json',
    );
  const pool = [
    { name: 'box-1', ssh: 'u@a', slots: 3 },
    { name: 'box-2', ssh: 'u@b', slots: 2 },
  ];

  it('a pin that names a configured machine runs', () => {
    expect(() => resolveSettings(plan('box-2'), config(pool))).not.toThrow();
    expect(plan('box-2').children[1]!.machine).toBe('box-2');
  });

  it('a pin to a machine the config does not have: exit 2 naming the child and the machines', () => {
    const error = (() => {
      try {
        resolveSettings(plan('box-3'), config(pool));
      } catch (e) {
        return e as LanesError;
      }
      throw new Error('accepted');
    })();
    expect(error.exitCode).toBe(2);
    expect(error.message).toContain(
      'children[1].machine: "box-3" is not a machine of lanes.config.json (child "T2"; machines: box-1, box-2)',
    );
    // (a pool without local: a pin to local is as unknown as any other)
    expect(() => resolveSettings(plan('local'), config(pool))).toThrow(/"local" is not a machine/);
    // (without machines every lane is local: the one pin there is)
    expect(() => resolveSettings(plan('local'), config())).not.toThrow();
  });

  it('a pin is not part of the digest (the contract of the child is the same)', () => {
    expect(planDigest(plan('box-1'))).toBe(planDigest(plan()));
  });

  it('max_parallel defaults to the slots of the machines, a max_parallel given wins', () => {
    expect(resolveSettings(plan(), config(pool)).maxParallel).toBe(5);
    expect(resolveSettings(plan(), config()).maxParallel).toBe(2);
    expect(resolveSettings(plan(), config(pool), { parallel: 1 }).maxParallel).toBe(1);
  });
});
