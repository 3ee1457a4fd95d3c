/**
 * The OpenAI Responses front end (`POST /v1/responses`): parses the request into the neutral model and
 * renders answers, streams and errors as OpenAI's Responses API does. Pure: no I/O, no providers.
 * `responsesFrontEndFor` binds one request (its custom tools, its echoed settings) and extra headers.
 */
import type { GatewayError } from '../../errors.ts';
import type { CallRequest } from '../../pipeline/call-model.ts';
import type { FrontEnd } from '../../pipeline/front-end.ts';
import { customToolNames } from './custom-tools.ts';
import { parseResponsesRequest } from './parse.ts';
import { outputItems, responseIdFor, responseObject, terminalStatus } from './response-object.ts';
import { ResponsesStreamRenderer } from './stream-renderer.ts';

export function responsesFrontEndFor(req: CallRequest | null, headers: Record<string, string> = {}): FrontEnd {
  return {
    protocol: 'openai-responses',
    parse: parseResponsesRequest,
    render(result, meta, end) {
      const choice = result.choices[0];
      const { status, incomplete } = terminalStatus(choice?.finish ?? null);
      return JSON.stringify(
        responseObject({
          id: responseIdFor(meta.requestId),
          createdAt: result.created,
          model: meta.model || result.model,
          status,
          output: outputItems(choice?.content ?? [], req ? customToolNames(req) : new Set()),
          usage: end.usage ?? result.usage,
          costUsd: end.costUsd,
          incomplete,
          error: null,
          ...(req ? { req } : {}),
        }),
      );
    },
    stream: (r, meta) => new ResponsesStreamRenderer(r, meta),
    error(err: GatewayError, requestId: string) {
      return {
        status: err.status,
        headers: { ...err.responseHeaders(), 'content-type': 'application/json', 'x-request-id': requestId },
        body: JSON.stringify(err.toBody()),
      };
    },
    headers: () => headers,
  };
}

export const responsesFrontEnd: FrontEnd = responsesFrontEndFor(null);

export { bridgeLimits, builtinToolTypes } from './parse.ts';
