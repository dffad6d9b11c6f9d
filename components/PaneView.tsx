import { Box, Text } from 'ink';
import type { LaneSession } from '../src/hosts/host.js';
import type { ScreenModel, StyledRun } from '../src/hosts/screen.js';
import { windowStart } from '../src/tui/pane-layout.js';

// One lane's live terminal: the pty host's screen model drawn row by row with its colours
// kept (palette → ansi256, true colour → hex). Hosts without a screen model (headless,
// Herdr) show their recent output as plain lines.

function inkColor(value: number | null, rgb: boolean): string | undefined {
  if (value === null) return undefined;
  return rgb ? `#${value.toString(16).padStart(6, '0')}` : `ansi256(${value})`;
}

function runsOf(session: LaneSession, rows: number): StyledRun[][] {
  const screen = (session as { screen?: ScreenModel }).screen;
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

export interface PaneViewProps {
  title: string;
  session: LaneSession | null;
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
        rows.map((runs, y) => (
          <Box key={y} height={1} overflow="hidden">
            <Text wrap="truncate">
              {runs.map((run, x) => (
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
          </Box>
        ))
      )}
    </Box>
  );
}
