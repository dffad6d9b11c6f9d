// What a command needs from its surroundings: where it runs and where it prints.
export interface CommandContext {
  cwd: string;
  stdout: (text: string) => void;
  stderr: (text: string) => void;
}
