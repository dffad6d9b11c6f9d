// The program of lanes' process helper (git-helper.ts), plain JavaScript run with `node -e`:
// no file to find next to the bundle, no build step. One JSON line in; the answers are JSON
// lines with the request's id:
// - `git` (argv, env on top of the helper's, input): stdout and stderr back when it ends.
//   Serial ones wait in a queue of their own, one running at a time.
// - `check` (its whole env): stdout and stderr interleaved into a bounded log file, the tail
//   back; run in its own process group, killed with it at the timeout, and what it left
//   running killed when it exits.
// - `exec` (an executor, its whole env): its pid once started, what it printed since the
//   last answer (at most every notifyMs; everything also goes to its bounded transcript
//   file), and its exit; what it left running in its group is killed when it exits.
// When lanes goes away (stdin ends) running git and checks finish, queued serial ones never
// start (as if lanes had not sent them), executors lose their output's reader (as they would
// have without the helper), then it ends.
import { leftoverNote, sweepProcesses } from '../../process/leftovers.js';

export const HELPER_SOURCE = `
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const { createInterface } = require('node:readline');
const { dirname } = require('node:path');
const { StringDecoder } = require('node:string_decoder');
const out = (answer) => process.stdout.write(JSON.stringify(answer) + '\\n');
${sweepProcesses.toString()}
${leftoverNote.toString()}
const serial = [];
let serialRunning = false;
let inputEnded = false;
function nextSerial() {
  const req = inputEnded ? undefined : serial.shift();
  serialRunning = req !== undefined;
  if (req) runGit(req, nextSerial);
}
// (spawn, not execFile: no stdin pipe for a request without input, and no output buffering
// of execFile's own; a fork of this process is most of what a git call costs it)
function runGit(req, done) {
  const input = typeof req.input === 'string';
  let child;
  try {
    child = spawn('git', req.argv, {
      cwd: req.cwd,
      env: { ...process.env, ...req.env },
      stdio: [input ? 'pipe' : 'ignore', 'pipe', 'pipe'],
    });
  } catch (error) {
    out({ id: req.id, exitCode: null, stdout: '', stderr: '', spawnError: error.message });
    if (done) done();
    return;
  }
  let stdout = '';
  let stderr = '';
  let spawnError;
  child.stdout.setEncoding('utf8');
  child.stderr.setEncoding('utf8');
  child.stdout.on('data', (text) => { stdout += text; });
  child.stderr.on('data', (text) => { stderr += text; });
  let finished = false;
  const finish = (code) => {
    if (finished) return;
    finished = true;
    if (typeof code !== 'number')
      out({ id: req.id, exitCode: null, stdout, stderr, spawnError: spawnError || 'git ended by a signal' });
    else out({ id: req.id, exitCode: code, stdout, stderr });
    if (done) done();
  };
  child.on('error', (error) => { spawnError = error.message; if (!child.pid) finish(null); });
  child.on('close', (code) => finish(code));
  if (input) {
    child.stdin.on('error', () => {});
    child.stdin.end(req.input);
  }
}
// A process in a group of its own: stdout and stderr as they come, the raw bytes into a log
// cut at req.logLimit (with cutNote), decoded once for onText; what it left running in its
// group is killed when it exits. Throws when the log cannot be opened.
function spawnLogged(req, logFlags, cutNote, onText) {
  let fd = null;
  if (req.logPath) {
    fs.mkdirSync(dirname(req.logPath), { recursive: true });
    // (never through a symbolic link planted in the state dir: ELOOP instead)
    const c = fs.constants;
    const mode = logFlags === 'a' ? c.O_APPEND : c.O_TRUNC;
    fd = fs.openSync(req.logPath, c.O_WRONLY | c.O_CREAT | c.O_NOFOLLOW | mode, 0o644);
  }
  let written = 0;
  const log = (bytes) => {
    if (fd === null || written >= req.logLimit) return;
    const part = bytes.subarray(0, req.logLimit - written);
    fs.writeSync(fd, part);
    written += part.length;
    if (written >= req.logLimit) fs.writeSync(fd, cutNote);
  };
  const decoder = new StringDecoder('utf8');
  const child = spawn(req.file, req.args, { cwd: req.cwd, env: req.env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  const killGroup = () => { try { if (child.pid) process.kill(-child.pid, 'SIGKILL'); } catch {} };
  const take = (chunk) => { log(chunk); onText(decoder.write(chunk)); };
  child.stdout.on('data', take);
  child.stderr.on('data', take);
  child.on('exit', killGroup);
  return {
    child,
    killGroup,
    /** A line of lanes' own, into the log and the text. */
    note: (text) => { log(Buffer.from(text)); onText(text); },
    close: () => { if (fd !== null) fs.closeSync(fd); fd = null; },
  };
}
function runCheck(req) {
  let tail = '';
  let timedOut = false;
  let spawnError;
  let run;
  try {
    run = spawnLogged(req, 'w', '\\n[lanes] log cut at ' + req.logLimit + ' bytes\\n', (text) => { tail = (tail + text).slice(-req.tailBytes); });
  } catch (error) {
    out({ id: req.id, exitCode: null, timedOut: false, tail: '', spawnError: error.message });
    return;
  }
  const { child } = run;
  const timer = setTimeout(() => { timedOut = true; run.killGroup(); }, req.timeoutMs);
  let finished = false;
  const finish = (code) => {
    if (finished) return;
    finished = true;
    clearTimeout(timer);
    if (spawnError && !timedOut) run.note('\\n' + spawnError + '\\n');
    if (timedOut) run.note('\\n[lanes] check ' + req.checkId + ' timed out after ' + req.timeoutMs + ' ms and was killed\\n');
    run.close();
    out({ id: req.id, exitCode: timedOut || typeof code !== 'number' ? null : code, timedOut, tail, ...(spawnError ? { spawnError } : {}) });
  };
  child.on('error', (error) => { spawnError = error.message; if (!child.pid) finish(null); });
  child.on('exit', () => clearTimeout(timer));
  child.on('close', (code) => finish(code));
}
const execs = new Set();
function runExec(req) {
  let news = '';
  let timer = null;
  let started = false;
  const tell = () => {
    timer = null;
    if (news) out({ id: req.id, output: news });
    news = '';
  };
  let run;
  try {
    run = spawnLogged(req, 'a', '\\n[lanes] transcript cut at the size limit\\n', (text) => {
      news = (news + text).slice(-req.tailBytes);
      if (timer === null) timer = setTimeout(tell, req.notifyMs);
    });
  } catch (error) {
    out({ id: req.id, exit: { code: 127, signal: null }, spawnError: error.message });
    return;
  }
  const { child } = run;
  execs.add(child);
  // What it left running outside its group (a setsid daemon holding its output) goes with
  // it: its own exit is the exit (src/process/leftovers.ts).
  if (req.sweep) child.on('exit', () => run.note(leftoverNote(sweepProcesses(fs, req.sweep, process.pid))));
  child.on('spawn', () => {
    started = true;
    out({ id: req.id, pid: child.pid });
  });
  let finished = false;
  const finish = (code, signal, spawnError) => {
    if (finished) return;
    finished = true;
    execs.delete(child);
    if (timer !== null) clearTimeout(timer);
    tell();
    run.close();
    out({ id: req.id, exit: { code, signal }, ...(spawnError ? { spawnError } : {}) });
  };
  child.on('error', (error) => { if (!started) finish(127, null, error.message); });
  child.on('close', (code, signal) => finish(code, signal));
}
createInterface({ input: process.stdin }).on('line', (line) => {
  const req = JSON.parse(line);
  if (req.kind === 'check') runCheck(req);
  else if (req.kind === 'exec') runExec(req);
  else if (!req.serial) runGit(req);
  else {
    serial.push(req);
    if (!serialRunning) nextSerial();
  }
}).on('close', () => {
  inputEnded = true;
  // lanes is gone: its executors lose their reader, as they would without the helper
  // (the next write is a SIGPIPE), and no longer keep the helper alive.
  for (const child of execs) {
    child.stdout.destroy();
    child.stderr.destroy();
    child.unref();
  }
});
process.stdout.on('error', () => process.exit(0));
out({ ready: true });
`;
