import { Box } from 'ink';
import type { LaneSession } from '../src/hosts/host.js';
import { paneLayout } from '../src/tui/pane-layout.js';
import { PaneView } from './PaneView.js';

/** The focused lane's terminal, or a grid of up to four (src/tui/pane-layout.ts). Only these panes are rendered. */
export function PaneArea({
  tasks,
  selected,
  sessionOf,
  width,
  height,
  attached,
}: {
  tasks: string[];
  selected: string | null;
  sessionOf: (task: string) => LaneSession | null;
  width: number;
  height: number;
  attached: boolean;
}) {
  if (tasks.length <= 1) {
    const task = tasks[0] ?? selected;
    return (
      <PaneView
        title={task ?? 'no lane'}
        session={task ? sessionOf(task) : null}
        width={width}
        height={height}
        focused
        attached={attached}
      />
    );
  }
  return (
    <Box flexDirection="column">
      {paneLayout(tasks, width, height).map((cells, r) => (
        <Box key={r}>
          {cells.map((cell) => (
            <PaneView
              key={cell.task}
              title={cell.task}
              session={sessionOf(cell.task)}
              width={cell.width}
              height={cell.height}
              focused={cell.task === selected}
              attached={attached && cell.task === selected}
            />
          ))}
        </Box>
      ))}
    </Box>
  );
}
