import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cleanup, render } from 'ink-testing-library';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { App } from '../../components/App.js';
import { machineLineColor } from '../../components/ConfirmScreen.js';
import { describePlan, preflight } from '../../src/cli/start/confirm.js';
import type { MachineView } from '../../src/core/machines/machines.js';
import { noMachineLeft } from '../../src/core/machines/machines.js';
import { parsePlanText } from '../../src/core/plan/plan.js';
import { findRepo } from '../../src/store/state-dir.js';
import { copyRepo, leanRepo } from '../e2e/reliability/support.js';
import { recordingActions, resize, settled, waitForFrame } from '../helpers/tui.js';

// The confirmation with machines (docs/DECISIONS.md, "Machines: placement"): each machine
// with its slots, and, once checked, its state and why one is left out; on the 80x24
// confirmation screen they stand right below max_parallel, not pushed off by a long plan.

afterEach(() => cleanup());

let template: string;
beforeAll(async () => {
  template = await leanRepo();
});

// (a chain: one wave a child, more lines than the screen has rows)
const children = Array.from({ length: 24 }, (_, i) => ({
  id: `T${i + 1}`,
  blocked_by: i === 0 ? [] : [`T${i}`],
  goal: `do ${i + 1}`,
  scope: [`s${i + 1}/**`],
  acceptance: [{ id: 'ok', run: ['true'] }],
  executor: 'script',
  run: 'true',
}));
const plan = parsePlanText(JSON.stringify({ batch: 'm1', children }), 'plan.json');

async function confirmationLines(config: object | null, machines?: MachineView[]): Promise<string[]> {
  const repo = copyRepo(template);
  if (config) writeFileSync(join(repo, 'lanes.config.json'), JSON.stringify(config));
  const p = await preflight(await findRepo(repo), plan, {});
  return describePlan(plan, machines ? { ...p, machines } : p)
    .trimEnd()
    .split('\n');
}

const CONFIG = {
  machines: [
    { name: 'local', slots: 2 },
    { name: 'box-a', ssh: 'me@a', slots: 4 },
    { name: 'box-b', ssh: 'me@b', slots: 1 },
  ],
};
const CHECKED: MachineView[] = [
  { name: 'local', slots: 2, state: 'ready' },
  { name: 'box-a', slots: 4, state: 'ready' },
  { name: 'box-b', slots: 1, state: 'left out', reason: 'git 2.30 is older than 2.38' },
];

describe('the confirmation with machines', () => {
  it('lists the machines of the config with their slots, right below max_parallel', async () => {
    const lines = await confirmationLines(CONFIG);
    const at = lines.findIndex((l) => l.startsWith('max_parallel'));
    expect(lines[at]).toContain('max_parallel 7 (slots of the machines)');
    expect(lines.slice(at + 1, at + 4)).toEqual([
      'machine local  2 slots',
      'machine box-a  4 slots',
      'machine box-b  1 slot',
    ]);
  });

  it('shows the state each machine was found in, and why one is left out', async () => {
    const lines = await confirmationLines(CONFIG, CHECKED);
    expect(lines).toContain('machine local  2 slots  ready');
    expect(lines).toContain('machine box-b  1 slot  left out: git 2.30 is older than 2.38');
    expect(machineLineColor('machine box-b  1 slot  left out: git 2.30 is older than 2.38')).toBe('red');
    expect(machineLineColor('machine box-a  4 slots  reconnecting')).toBe('yellow');
    expect(machineLineColor('machine local  2 slots  ready')).toBe('green');
    expect(machineLineColor('max_parallel 7 (config)')).toBeUndefined();
  });

  it('on the 80x24 screen the machines are shown though the plan does not fit', async () => {
    const lines = await confirmationLines(CONFIG, CHECKED);
    const ui = render(<App store={null} actions={recordingActions()} confirmLines={lines} />);
    resize(ui.stdout as unknown as NodeJS.EventEmitter, 80, 24);
    await settled();
    const frame = await waitForFrame(ui.lastFrame, /more lines/);
    for (const row of frame.split('\n')) expect([...row].length).toBeLessThanOrEqual(80);
    expect(frame.split('\n').length).toBeLessThanOrEqual(22);
    expect(frame).toContain('machine box-a  4 slots  ready');
    expect(frame).toContain('machine box-b  1 slot  left out: git 2.30 is older than 2.38');
    expect(frame).toMatch(/… \d+ more lines/);
    expect(frame).toContain('y start');
  });

  it('without machines nothing of them is shown (the confirmation as before)', async () => {
    const lines = await confirmationLines(null);
    expect(lines.some((l) => l.startsWith('machine'))).toBe(false);
    expect(lines.find((l) => l.startsWith('max_parallel'))).toContain('max_parallel 2 (default)');
  });

  it('every machine left out: the refusal names each and why', () => {
    expect(noMachineLeft(CHECKED)).toBeNull();
    const out = CHECKED.map((m) => ({ ...m, state: 'left out' as const, reason: m.reason ?? 'no answer' }));
    expect(noMachineLeft(out)).toBe(
      'no machine can run lanes: local (no answer), box-a (no answer), box-b (git 2.30 is older than 2.38)',
    );
  });
});
