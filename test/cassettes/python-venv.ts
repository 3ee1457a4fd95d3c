/**
 * The Python `openai` SDK for the cassette tests: the same venv as test/sdk/sdk-compat.test.ts
 * (`.venv/sdk`, `openai>=2,<4` from PyPI), reused when it is there, created once otherwise.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from '../support/cli.ts';

const VENV = path.join(REPO_ROOT, '.venv', 'sdk');
const PYTHON = path.join(VENV, process.platform === 'win32' ? 'Scripts/python.exe' : 'bin/python');

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

export function run(cmd: string, args: string[], env: NodeJS.ProcessEnv = process.env, timeoutMs = 180_000): Promise<Run> {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
    child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', (err) => {
      stderr += String(err);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** The venv's python with `openai` importable, or a reason it is not available. */
export async function pythonWithOpenAI(): Promise<{ python: string } | { missing: string }> {
  const probe = () => run(PYTHON, ['-c', 'import openai'], process.env, 60_000);
  if (existsSync(PYTHON) && (await probe()).code === 0) return { python: PYTHON };
  if (!existsSync(PYTHON)) {
    const system = ['python3', 'python'].find((c) => spawnSync(c, ['--version'], { stdio: 'ignore' }).status === 0);
    if (!system) return { missing: 'python3 is not on PATH' };
    const venv = await run(system, ['-m', 'venv', VENV]);
    if (venv.code !== 0) return { missing: `python -m venv failed: ${venv.stderr.trim()}` };
  }
  const pip = await run(PYTHON, ['-m', 'pip', 'install', '--disable-pip-version-check', '--quiet', 'openai>=2,<4']);
  if (pip.code !== 0) throw new Error(`pip install openai failed: ${pip.stderr}`);
  return { python: PYTHON };
}
