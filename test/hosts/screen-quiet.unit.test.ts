import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ScreenModel } from '../../src/hosts/pty/screen.js';

// Bytes that are no terminal sequence (a binary file cat into a lane) made xterm log one
// "xterm.js: Parsing error" line each on the coordinator's stderr: 473 MB of them for 100 MB
// of output (issue 24, item 14). The screen model parses them quietly.

afterEach(() => vi.restoreAllMocks());

describe('a pane fed bytes that are no terminal sequence', () => {
  it('parses them without logging a line', async () => {
    const logged = vi.fn();
    for (const level of ['error', 'warn', 'log', 'info', 'debug'] as const)
      vi.spyOn(console, level).mockImplementation(logged);
    const screen = new ScreenModel(80, 24);
    for (let i = 0; i < 20; i++) await screen.write(randomBytes(100_000));
    screen.dispose();
    expect(logged).not.toHaveBeenCalled();
  });
});
