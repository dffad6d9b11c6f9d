import { Box, Text } from 'ink';
import { memo } from 'react';
import { windowStart } from '../src/tui/pane-layout.js';
import type { PaneSession, StyledRun } from '../src/tui/pane-session.js';

// One lane's live terminal: the pty host's screen model drawn row by row with its colours
// kept (palette → ansi256, true colour → hex). Hosts without a screen model (headless,
// Herdr) show their recent output as plain lines.

function inkColor(value: number | null, rgb: boolean): string | undefined {
  if (value === null) return undefined;
  return rgb ? `#${value.toString(16).padStart(6, '0')}` : `ansi256(${value})`;
}

function runsOf(session: PaneSession, rows: number): StyledRun[][] {
  const screen = session.screen;
  if (screen) {
    // A screen taller than the pane shows the rows around the cursor (src/tui/pane-layout.ts).
    const lines = screen.styledLines();
    let lastDrawn = lines.length - 1;
    while (lastDrawn > 0 && lines[lastDrawn]!.length === 0) lastDrawn--;
    const start = windowStart(lines.length, rows, screen.cursor().y, lastDrawn);
    return lines.slice(start, start + rows);
  }
  return session
    .recentLines(rows)
    .map((text) => [{ text, fg: null, bg: null, bold: false, fgRgb: false, bgRgb: false }]);
}

/**
 * One row of the pane. The worker's snapshots keep the rows that did not change (the same
 * arrays: src/hosts/pty/remote-screen.ts), so those rows are not rendered again.
 */
const PaneRow = memo(function PaneRow({ runs }: { runs: StyledRun[] }) {
  return (
    <Text wrap="truncate">
      {runs.length === 0
        ? ' '
        : runs.map((run, x) => (
            <Text
              key={x}
              color={inkColor(run.fg, run.fgRgb)}
              backgroundColor={inkColor(run.bg, run.bgRgb)}
              bold={run.bold}
            >
              {run.text}
            </Text>
          ))}
    </Text>
  );
});

export interface PaneViewProps {
  title: string;
  session: PaneSession | null;
  width: number;
  height: number;
  focused: boolean;
  attached: boolean;
}

export function PaneView({ title, session, width, height, focused, attached }: PaneViewProps) {
  const inner = Math.max(1, height - 3);
  const rows = session ? runsOf(session, inner) : [];
  const border = attached ? 'greenBright' : focused ? 'blueBright' : 'gray';
  return (
    <Box flexDirection="column" width={width} height={height} borderStyle="round" borderColor={border}>
      <Text color={border} wrap="truncate">
        {title}
        {attached ? ' · attached (ctrl-g detaches)' : ''}
      </Text>
      {session === null ? (
        <Text dimColor>no executor running in this lane</Text>
      ) : (
        // One Text a row, truncated only when wider than the pane (a screen not resized yet):
        // a Box with overflow hidden around each row had Ink slice every row of every frame
        // (docs/PERFORMANCE.md "Panes off the main thread"). A blank row is a space, so it
        // keeps its line.
        rows.map((runs, y) => <PaneRow key={y} runs={runs} />)
      )}
    </Box>
  );
}
