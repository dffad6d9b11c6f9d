import { Box, Text } from 'ink';
import { footerHints } from '../src/tui/keymap.js';
import type { Command } from '../src/tui/keymap.js';

/** The keys that apply to the current view, and the latest notice. */
export function Footer({ commands, notice }: { commands: Command[]; notice: string | null }) {
  return (
    <Box flexDirection="column">
      {notice ? (
        <Text color="yellow" wrap="truncate-end">
          {notice}
        </Text>
      ) : null}
      <Text dimColor wrap="truncate-end">
        {footerHints(commands)}
      </Text>
    </Box>
  );
}
