// Starts a real `engram serve` ($ENGRAM_BIN, which integrations/run.sh
// builds) for the tests: its own data directory, a free loopback port, API
// keys required, and an admin key of org acme, project app.
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface Engram {
  url: string;
  /** An admin key of acme/app. */
  key: string;
  logs(): string;
  stop(): Promise<void>;
}

export async function startEngram(args: string[] = []): Promise<Engram> {
  const bin = process.env['ENGRAM_BIN'];
  if (!bin) throw new Error('ENGRAM_BIN is not set: run the tests with integrations/run.sh, or build engram and export ENGRAM_BIN');
  const dataDir = mkdtempSync(join(tmpdir(), 'engram-ts-'));
  const key = execFileSync(bin, ['keys', 'create', '--data', dataDir, '--org', 'acme', '--project', 'app', '--role', 'admin'], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  }).trim();
  const child = spawn(bin, ['serve', '--addr', '127.0.0.1:0', '--data', dataDir, ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`engram serve did not listen within 60s:\n${log}`)), 60_000);
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => {
      log += chunk;
      const m = /listening on (https?:\/\/[^\s"]+)/.exec(log);
      if (m?.[1]) {
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
