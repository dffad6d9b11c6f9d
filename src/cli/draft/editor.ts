import { spawnSync } from 'node:child_process';

// The user's editor for a drafted plan: $VISUAL, else $EDITOR, else vi (git's order after
// its own settings). The variable may carry arguments ("code --wait"): it is split on
// whitespace into an argv, as git splits it, and run without a shell, the file last.

export function editorArgv(env: NodeJS.ProcessEnv): string[] {
  const words = (env.VISUAL?.trim() || env.EDITOR?.trim() || 'vi').split(/\s+/);
  return words.filter((w) => w.length > 0);
}

/** Runs the editor on `file` in this terminal until it exits; what went wrong, or null. */
export function editFile(file: string, env: NodeJS.ProcessEnv = process.env): string | null {
  const [program, ...args] = editorArgv(env);
  const result = spawnSync(program!, [...args, file], { stdio: 'inherit' });
  if (result.error) return `could not run the editor ${program}: ${result.error.message}`;
  if (result.status !== 0)
    return `the editor ${program} ended with ${result.status ?? result.signal} (the file is as it left it)`;
  return null;
}
