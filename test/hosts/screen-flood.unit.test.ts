import { describe, expect, it } from 'vitest';
import { ScreenModel } from '../../src/hosts/pty/screen.js';

// A pane flooded with output (an executor that cats 20 MB) is read as fast as it writes:
// the screen model parses a bounded share of the flood and drops the oldest of the rest,
// instead of parsing every byte on the thread that reads the ptys (which held the executor
// back: 2.7-4.8x a plain tmux pane, issue 28). Here the flood arrives the way a pty delivers
// it, a chunk a turn of the event loop; the screen still ends on the flood's last lines.

const LINE = `${'x'.repeat(70)}\r\n`;
const CHUNK = LINE.repeat(56); // about 4 KB, a pty read

describe('a pane flooded with output', () => {
  it('parses at most a quarter of the flood and ends on its last line', async () => {
    const screen = new ScreenModel(80, 24);
    let lineFeeds = 0;
    screen.term.onLineFeed(() => lineFeeds++);
    const chunks = 2500; // 10 MB
    for (let i = 0; i < chunks; i++) {
      void screen.write(CHUNK);
      await new Promise((r) => setImmediate(r));
    }
    void screen.write('the last line\r\n');
    await screen.flushed();
    expect(screen.lines()).toContain('the last line');
    expect(lineFeeds).toBeLessThan((chunks * 56) / 4);
    screen.dispose();
  });
});
