/** The tokenizer worker: counts the tokens of texts too large to tokenise on the request thread. */
import { parentPort } from 'node:worker_threads';
import { encode } from 'gpt-tokenizer';

export interface TokenizeRequest {
  id: number;
  texts: string[];
}

export interface TokenizeReply {
  id: number;
  tokens: number;
}

const port = parentPort;
if (port) {
  port.on('message', (m: TokenizeRequest) => {
    let tokens = 0;
    for (const text of m.texts) tokens += text.length === 0 ? 0 : encode(text).length;
    port.postMessage({ id: m.id, tokens } satisfies TokenizeReply);
  });
}
