import { execFile } from 'node:child_process';
import { homedir, userInfo } from 'node:os';
import type { OpValues } from '../protocol.js';
import type { Place } from './place.js';

// `hello`: what the coordinator learns of a machine before it puts a lane there (its
// preflight judges the versions): the root resolved here, whose home, and the programs.

function versionOf(program: string, args: readonly string[], pattern: RegExp): Promise<string | null> {
  return new Promise((resolve) => {
    execFile(program, args, (error, stdout) => {
      resolve(error ? null : (pattern.exec(stdout)?.[1] ?? stdout.trim()));
    });
  });
}

export async function hello(place: Place): Promise<OpValues['hello']> {
  const [gitVersion, tmuxVersion] = await Promise.all([
    versionOf('git', ['--version'], /git version (\S+)/),
    versionOf('tmux', ['-V'], /tmux (\S+)/),
  ]);
  let user: string;
  try {
    user = userInfo().username;
  } catch {
    user = process.env.USER ?? String(process.getuid?.() ?? '');
  }
  return {
    root: place.root,
    home: homedir(),
    user,
    versions: { git: gitVersion, node: process.versions.node, tmux: tmuxVersion },
  };
}
