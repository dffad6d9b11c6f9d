import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { pendingRequests, removeRequest, requestsDir, writeRequest } from '../../src/store/requests.js';
import { tempDir } from '../helpers/repo.js';

// Requests to a running coordinator (src/store/requests.ts): written atomically, read back
// checked, oldest first; a file that is not a request is removed and named, never applied.

describe('coordinator requests', () => {
  it('round-trips drop and cancel requests, oldest first, and removes them once applied', () => {
    const stateDir = join(tempDir(), 'lanes');
    const a = writeRequest(stateDir, 'b1', { action: 'drop', task_id: 'T1', reason: 'not needed' });
    const b = writeRequest(stateDir, 'b1', { action: 'cancel', reason: 'batch cancelled' });
    const pending = pendingRequests(stateDir, 'b1');
    expect(pending.map((p) => p.request.action).sort()).toEqual(['cancel', 'drop']);
    expect(pending.find((p) => p.file === a)?.request).toEqual({
      action: 'drop',
      task_id: 'T1',
      reason: 'not needed',
    });
    removeRequest(a);
    removeRequest(b);
    expect(pendingRequests(stateDir, 'b1')).toEqual([]);
    expect(pendingRequests(stateDir, 'other')).toEqual([]);
  });

  it('refuses a request that is not one: removed and named, nothing applied', () => {
    const stateDir = join(tempDir(), 'lanes');
    const dir = requestsDir(stateDir, 'b1');
    mkdirSync(dir, { recursive: true });
    const bad = join(dir, '1-1-drop.json');
    writeFileSync(bad, '{"action":"drop","task_id":"../x","reason":"r"}\n');
    writeFileSync(join(dir, '2-1-cancel.json'), 'not json');
    const named: string[] = [];
    expect(pendingRequests(stateDir, 'b1', (f) => named.push(f))).toEqual([]);
    expect(named).toHaveLength(2);
    expect(existsSync(bad)).toBe(false);
    expect(() => writeRequest(stateDir, 'b1', { action: 'drop', task_id: '', reason: 'r' })).toThrow();
  });
});
