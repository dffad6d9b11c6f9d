import { cleanup, render } from 'ink-testing-library';
import { afterEach, describe, expect, it } from 'vitest';
import { Header } from '../../components/Header.js';
import { batchPorts } from '../../src/cli/batch-run/batch-ports.js';
import { describePlan, preflight } from '../../src/cli/start/confirm.js';
import { parsePlanText } from '../../src/core/plan/plan.js';
import { findRepo } from '../../src/store/state-dir.js';
import { TuiStore } from '../../src/tui/tui-store.js';
import YAML from 'yaml';
import { startBatch } from '../helpers/batch.js';
import { makeRepo } from '../helpers/repo.js';
import { plain, waitForFrame } from '../helpers/tui.js';

// The header counts waves as the confirmation does (max_parallel splits a level), and its
// clock stops when the batch ends.

afterEach(() => cleanup());

const check = (id: string) => `{ id: ${id}, run: "true" }`;
const PLAN = `
batch: waves
max_parallel: 1
children:
  - { id: A, goal: Write a, scope: ["a/**"], acceptance: [${check('ok')}] }
  - { id: B, goal: Write b, scope: ["b/**"], acceptance: [${check('ok')}] }
  - { id: C, goal: Write c, blocked_by: [A], scope: ["c/**"], acceptance: [${check('ok')}] }
`;

describe('the header over a real batch', () => {
  it('says as many waves as the confirmation', async () => {
    const repoDir = await makeRepo();
    const plan = parsePlanText(PLAN, 'plan.yaml', YAML);
    const repo = await findRepo(repoDir);
    const confirmation = describePlan(plan, await preflight(repo, plan, {})); // before the batch exists
    const d = await startBatch(repoDir, PLAN);
    const files = batchPorts(d.repo, 'waves').store;
    const store = new TuiStore(files, d.plan);
    const ui = render(<Header snapshot={store.getSnapshot()} now={Date.now()} width={120} />);
    const frame = await waitForFrame(ui.lastFrame, 'integrated');
    const waves = /children in (\d+) waves/.exec(confirmation)?.[1];
    expect(waves).toBe('3');
    expect(frame).toMatch(new RegExp(`wave \\d/${waves} `));
    store.dispose();
  });

  it('stops its clock when the batch ends', async () => {
    const d = await startBatch(await makeRepo(), PLAN);
    const files = batchPorts(d.repo, 'waves').store;
    const store = new TuiStore(files, d.plan);
    const ui = render(<Header snapshot={store.getSnapshot()} now={Date.now()} width={120} />);
    await waitForFrame(ui.lastFrame, 'integrated');

    // The batch ends (here: cancelled through its record); an hour later the clock says the same.
    files.writeRecord({ ...files.readRecord(), batch_state: 'cancelled' });
    store.applyReport(null);
    const ended = store.getSnapshot();
    const at = (now: number) => {
      ui.rerender(<Header snapshot={ended} now={now} width={120} />);
      return plain(ui.lastFrame()).split('  ').at(-1);
    };
    const clock = at(Date.now());
    expect(at(Date.now() + 3_600_000)).toBe(clock);
    store.dispose();
  });
});
