import { describe, expect, it } from 'vitest';
import { refusalAction } from '../../src/core/rules/lane-refusal.js';

// What the coordinator does with a refused lane, as the core decides it: no git, no lanes.

describe('refusalAction', () => {
  it('moves a lane on an older batch head to the head while its child is still provisioned', () => {
    expect(refusalAction('batch_lane_base_mismatch', true)).toBe('move-to-head');
  });

  it('leaves a lane on an older head alone once its child lost the slot: it is reused later', () => {
    expect(refusalAction('batch_lane_base_mismatch', false)).toBe('leave');
  });

  it('leaves a lane of a child that is no longer startable alone', () => {
    expect(refusalAction('batch_lane_unknown_child', true)).toBe('leave');
    expect(refusalAction('batch_lane_unknown_child', false)).toBe('leave');
  });

  it('parks the child for every other refusal', () => {
    for (const reason of [
      'batch_lane_foreign_repository',
      'batch_lane_is_coordinator',
      'batch_lane_branch_mismatch',
      'batch_lane_dirty',
      'batch_lane_occupied',
    ])
      expect(refusalAction(reason, true)).toBe('park');
  });
});
