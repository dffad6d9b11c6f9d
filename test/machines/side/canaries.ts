// Plan strings that try to run something on the way to a program (the hostile strings of
// test/e2e/reliability/safety-injection.test.ts), and the words tmux itself would read: an
// argument ending in `;` ends a tmux command, `#{…}` is a tmux format, a leading `-` an
// option. Each must reach the program byte for byte, and no canary file may appear.

export function hostile(canary: string, n: number): string {
  return `$(touch ${canary}-${n}a) \`touch ${canary}-${n}b\`; touch ${canary}-${n}c && ../../etc/passwd "'`;
}

/** Strings for argv and env. `canary`: an absolute path whose files must never be made. */
export function canaryStrings(canary: string): string[] {
  return [
    hostile(canary, 1),
    `touch ${canary}-2;`,
    ';',
    '\\;',
    '#{session_name} #(touch CANARY-fmt) ##',
    '-t',
    '--',
    `line one\nline two $(touch ${canary}-3)`,
    "it's 'quoted' \"twice\" \\ back",
    '',
    '  spaced  ',
    'ünïcödé ✓ 雪',
    '$HOME ${PATH} %s %n',
  ];
}

/** A folder name (no `/`) with the shell's and tmux's special characters in it. */
export const HOSTILE_SEGMENT = `$(touch CANARY-dir) \`touch CANARY-dir\`; x && "'#{pane_id} ;`;
