import type { StyledRun } from '../hosts/pty/screen.js';

// What the views need of a lane's session: its screen where the host keeps one (pty), its
// recent output lines otherwise, and where an attached pane's keystrokes go. The hosts'
// LaneSession is one; the views see only this.

export type { StyledRun };

export interface PaneScreen {
  styledLines(): StyledRun[][];
  cursor(): { x: number; y: number };
}

export interface PaneSession {
  readonly running: boolean;
  readonly screen?: PaneScreen | undefined;
  recentLines(count: number): string[];
  write(data: string): void;
}
