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
export const HELPER_SOURCE = `
const { execFile, spawn } = require('node:child_process');
const fs = require('node:fs');
const { createInterface } = require('node:readline');
const out = (answer) => process.stdout.write(JSON.stringify(answer) + '\\n');
const serial = [];
let serialRunning = false;
let inputEnded = false;
function nextSerial() {
  const req = inputEnded ? undefined : serial.shift();
  serialRunning = req !== undefined;
  if (req) runGit(req, nextSerial);
}
function runGit(req, done) {
  const child = execFile('git', req.argv, {
    cwd: req.cwd,
    env: { ...process.env, ...req.env },
    maxBuffer: 256 * 1024 * 1024,
    encoding: 'utf8',
  }, (error, stdout, stderr) => {
    const code = error && error.code;
    if (error && typeof code !== 'number')
      out({ id: req.id, exitCode: null, stdout, stderr, spawnError: error.message });
    else out({ id: req.id, exitCode: typeof code === 'number' ? code : 0, stdout, stderr });
    if (done) done();
  });
  if (child.stdin) {
    child.stdin.on('error', () => {});
    child.stdin.end(req.input);
  }
}
function runCheck(req) {
  let fd = null;
  let written = 0;
  let tail = '';
  let timedOut = false;
  let spawnError;
  const take = (chunk) => {
    const text = chunk.toString();
    tail = (tail + text).slice(-req.tailBytes);
    if (fd !== null && written < req.logLimit) {
      const part = Buffer.from(text).subarray(0, req.logLimit - written);
      fs.writeSync(fd, part);
      written += part.length;
    }
  };
  try {
    if (req.logPath) fd = fs.openSync(req.logPath, 'w');
  } catch (error) {
    out({ id: req.id, exitCode: null, timedOut: false, tail: '', spawnError: error.message });
    return;
  }
  const child = spawn(req.file, req.args, { cwd: req.cwd, env: req.env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  const killGroup = () => { try { if (child.pid) process.kill(-child.pid, 'SIGKILL'); } catch {} };
  const timer = setTimeout(() => { timedOut = true; killGroup(); }, req.timeoutMs);
  child.stdout.on('data', take);
  child.stderr.on('data', take);
  let finished = false;
  const finish = (code) => {
    if (finished) return;
    finished = true;
    clearTimeout(timer);
    if (spawnError && !timedOut) take('\\n' + spawnError + '\\n');
    if (timedOut) take('\\n[lanes] check ' + req.checkId + ' timed out after ' + req.timeoutMs + ' ms and was killed\\n');
    if (fd !== null) {
      if (written >= req.logLimit) fs.writeSync(fd, '\\n[lanes] log cut at ' + req.logLimit + ' bytes\\n');
      fs.closeSync(fd);
    }
    out({ id: req.id, exitCode: timedOut || typeof code !== 'number' ? null : code, timedOut, tail, ...(spawnError ? { spawnError } : {}) });
  };
  child.on('error', (error) => { spawnError = error.message; if (!child.pid) finish(null); });
  child.on('exit', () => { clearTimeout(timer); killGroup(); });
  child.on('close', (code) => finish(code));
}
const execs = new Set();
function runExec(req) {
  let fd = null;
  let written = 0;
  let news = '';
  let timer = null;
  let started = false;
  const decoder = new (require('node:string_decoder').StringDecoder)('utf8');
  try {
    fd = fs.openSync(req.logPath, 'a');
  } catch (error) {
    out({ id: req.id, exit: { code: 127, signal: null }, spawnError: error.message });
    return;
  }
  const child = spawn(req.file, req.args, { cwd: req.cwd, env: req.env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  execs.add(child);
  const tell = () => {
    timer = null;
    if (news) out({ id: req.id, output: news });
    news = '';
  };
  const take = (chunk) => {
    if (fd !== null && written < req.logLimit) {
      const part = chunk.subarray(0, req.logLimit - written);
      fs.writeSync(fd, part);
      written += part.length;
      if (written >= req.logLimit) fs.writeSync(fd, '\\n[lanes] transcript cut at the size limit\\n');
    }
    news = (news + decoder.write(chunk)).slice(-req.tailBytes);
    if (timer === null) timer = setTimeout(tell, req.notifyMs);
  };
  child.stdout.on('data', take);
  child.stderr.on('data', take);
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
    if (fd !== null) fs.closeSync(fd);
    out({ id: req.id, exit: { code, signal }, ...(spawnError ? { spawnError } : {}) });
  };
  child.on('error', (error) => { if (!started) finish(127, null, error.message); });
  child.on('exit', () => { try { if (child.pid) process.kill(-child.pid, 'SIGKILL'); } catch {} });
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
`;
