/** Reading a provider secret: from stdin (`--key-stdin`) or a hidden prompt on a terminal. */
import { createInterface } from 'node:readline';

export async function readStdinSecret(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of process.stdin as AsyncIterable<Buffer>) chunks.push(c);
  return Buffer.concat(chunks).toString('utf8').trim();
}

export async function promptHidden(question: string): Promise<string> {
  const rl = createInterface({ input: process.stdin, output: process.stderr, terminal: true });
  const rlo = rl as unknown as { _writeToOutput: (s: string) => void };
  let asked = false;
  rlo._writeToOutput = (s: string) => {
    // Echo the question, then nothing of what is typed.
    if (!asked) {
      process.stderr.write(s);
      asked = true;
    }
  };
  try {
    return await new Promise<string>((resolve) => rl.question(question, (a) => resolve(a.trim())));
  } finally {
    rl.close();
    process.stderr.write('\n');
  }
}
