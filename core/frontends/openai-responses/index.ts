/**
 * The OpenAI Responses front end (`POST /v1/responses`): parses the request into the neutral model and
 * renders answers, streams and errors as OpenAI's Responses API does. Pure: no I/O, no providers.
 */
import type { GatewayError } from '../../errors.ts';
import type { FrontEnd } from '../../pipeline/front-end.ts';
import { parseResponsesRequest } from './parse.ts';
import { outputItems, responseIdFor, responseObject, terminalStatus } from './response-object.ts';
import { ResponsesStreamRenderer } from './stream-renderer.ts';

export const responsesFrontEnd: FrontEnd = {
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
        output: outputItems(choice?.content ?? []),
        usage: end.usage ?? result.usage,
        costUsd: end.costUsd,
        incomplete,
        error: null,
      }),
    );
  },
  stream: (req, meta) => new ResponsesStreamRenderer(req, meta),
  error(err: GatewayError, requestId: string) {
    return {
      status: err.status,
      headers: { ...err.responseHeaders(), 'content-type': 'application/json', 'x-request-id': requestId },
      body: JSON.stringify(err.toBody()),
    };
  },
};

export { bridgeLimits, builtinToolTypes } from './parse.ts';
