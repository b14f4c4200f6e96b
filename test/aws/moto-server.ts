// moto's server (python3 -m moto.server) on a free loopback port, for the artifact test: one process, stopped after.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { createServer } from 'node:net';

export const MOTO_INSTALL = "pip install 'moto[server]==5.2.1' cfn-lint==1.51.0";

export interface MotoServer {
  url: string;
  stop(): Promise<void>;
}

/** Fails with the command that installs moto when python3 cannot import it. */
export function requireMoto(): void {
  const probe = spawnSync('python3', ['-c', 'import moto, moto.server; print(moto.__version__)'], { encoding: 'utf8' });
  if (probe.status !== 0) throw new Error(`moto is not installed for python3; install it with: ${MOTO_INSTALL}`);
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

async function answers(url: string): Promise<boolean> {
  try {
    const res = await fetch(`${url}/moto-api/`);
    await res.arrayBuffer();
    return res.ok;
  } catch {
    return false;
  }
}

function exited(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => (child.exitCode !== null ? resolve() : child.once('exit', () => resolve())));
}

/** Starts moto and waits (up to 30 s) until it answers. */
export async function startMoto(): Promise<MotoServer> {
  requireMoto();
  const port = await freePort();
  const child = spawn('python3', ['-m', 'moto.server', '-H', '127.0.0.1', '-p', String(port)], {
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...process.env, MOTO_CALL_RESET_API: 'false' },
  });
  let log = '';
  child.stderr?.on('data', (d: Buffer) => (log = (log + d.toString()).slice(-4000)));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  while (!(await answers(url))) {
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`moto did not start on ${url}:\n${log}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  return {
    url,
    stop: async () => {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited(child);
    },
  };
}
