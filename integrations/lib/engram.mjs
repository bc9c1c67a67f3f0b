// Starts a real `engram serve` for a test: its own data directory, a free
// loopback port, API keys required. The binary is $ENGRAM_BIN (run.sh
// builds it); the model files come from the environment as for any engram.
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const bin = process.env.ENGRAM_BIN;
if (!bin) throw new Error('ENGRAM_BIN is not set: run the tests with integrations/run.sh');

// makeKey creates an API key in dataDir and returns its secret.
export function makeKey(dataDir, { org = 'acme', project = 'app', user = '', role = 'admin' } = {}) {
  const args = ['keys', 'create', '--data', dataDir, '--org', org, '--project', project, '--role', role];
  if (user) args.push('--user', user);
  return execFileSync(bin, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
}

// startEngram starts `engram serve` with extra args and env and resolves,
// once it listens, to { url, key, dataDir, logs(), stop() }. key is an admin
// key of org "acme", project "app" (noAuth: true serves without keys and
// key is ""). stop() ends the server and removes its data directory.
export async function startEngram({ args = [], env = {}, noAuth = false, keySpec = {} } = {}) {
  const dataDir = mkdtempSync(join(tmpdir(), 'engram-it-'));
  const key = noAuth ? '' : makeKey(dataDir, keySpec);
  const serveArgs = ['serve', '--addr', '127.0.0.1:0', '--data', dataDir, ...args];
  // A test sends its requests as fast as the server answers them; the
  // per-key limit (50 a second by default) is tested where it is asked for.
  if (!args.includes('--rate-limit')) serveArgs.push('--rate-limit', '0');
  if (noAuth) serveArgs.push('--no-auth');
  const child = spawn(bin, serveArgs, {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let log = '';
  const url = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`engram serve did not listen within 60s:\n${log}`)), 60_000);
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk) => {
      log += chunk;
      const m = /listening on (https?:\/\/[^\s"]+)/.exec(log);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`engram serve exited with ${code}:\n${log}`));
    });
  });
  return {
    url,
    key,
    dataDir,
    logs: () => log,
    stop: async () => {
      if (child.exitCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        await exited;
      }
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
