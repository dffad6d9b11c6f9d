import { Box, Text } from 'ink';
import { footerHints } from '../src/tui/keymap.js';
import type { Command } from '../src/tui/keymap.js';

/** The keys that apply to the current view (as many as fit, by priority), and the latest notice. */
export function Footer({
  commands,
  notice,
  width,
}: {
  commands: Command[];
  notice: string | null;
  width: number;
}) {
  return (
    <Box flexDirection="column">
      {notice ? (
        <Text color="yellow" wrap="truncate-end">
          {notice}
        </Text>
      ) : null}
      <Text dimColor wrap="truncate-end">
        {footerHints(commands, width)}
      </Text>
    </Box>
  );
}
