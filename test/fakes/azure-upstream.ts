import { startFakeServer } from './fault.ts';
import type { Exchange, FakeOptions, FakeUpstream, ProviderSpec, SseEvent } from './fault.ts';
import { startOpenAIUpstream } from './openai-upstream.ts';

// A fake Azure OpenAI resource. It speaks both shapes the gateway's Azure adapter knows:
// - the v1 API: `POST /openai/v1/chat/completions` (and /embeddings, GET /openai/v1/models), where the
//   body's `model` names a deployment and no api-version is needed;
// - the classic deployments API: `POST /openai/deployments/{dep}/chat/completions?api-version=...`.
// Auth is the `api-key` header only. Routing, auth, api-version and deployment checks happen here, in
// Azure's error shapes; the completion itself is produced by a private fake OpenAI upstream (same
// scenario, token counts and quirk knobs), so Azure answers exactly what OpenAI would, plus the one
// Azure habit clients meet: a first stream chunk with `choices: []` and `prompt_filter_results`.

export interface AzureFakeOptions {
  /** The resource key the `api-key` header must carry. */
  apiKey: string;
  /** Deployment name → the model it runs. */
  deployments: Record<string, string>;
  /** api-version values the deployments API accepts. Default: ['2024-10-21']. */
  apiVersions?: string[];
  /** Whether this resource serves the /openai/v1 API (older setups do not). Default true. */
  v1?: boolean;
  /** Send Azure's leading `choices: []` prompt-filter chunk on streams. Default true. */
  promptFilterChunk?: boolean;
}

export interface FakeAzure extends FakeUpstream {
  /** The fake OpenAI upstream that produces the completions: set quirk knobs (usage, cache...) on `inner.options`. */
  inner: FakeUpstream;
  azure: AzureFakeOptions;
}

interface AzureError {
  error: { code: string; message: string };
}

const azureError = (code: string, message: string): AzureError => ({ error: { code, message } });

const ERRORS: Record<number, AzureError> = {
  400: azureError('BadRequest', 'Invalid request (fake Azure).'),
  401: azureError(
    '401',
    'Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a valid key for an active subscription and use a correct regional API endpoint for your resource.',
  ),
  404: azureError('404', 'Resource not found'),
  429: azureError('429', 'Requests to the ChatCompletions_Create Operation have exceeded call rate limit (fake). Please retry after 1 second.'),
  500: azureError('InternalServerError', 'The server had an error while processing your request (fake Azure).'),
};

const DEPLOYMENT_ROUTE = /^\/openai\/deployments\/([^/]+)\/(chat\/completions|embeddings)$/;

export async function startAzureUpstream(azure: AzureFakeOptions, options?: Partial<FakeOptions>): Promise<FakeAzure> {
  const inner = await startOpenAIUpstream({ models: [...new Set(Object.values(azure.deployments))] });
  const versions = azure.apiVersions ?? ['2024-10-21'];

  const spec: ProviderSpec = {
    basePath: '',
    defaultModels: Object.values(azure.deployments),
    requestIdHeader: 'apim-request-id',
    errorReply: (status) => ({
      body: ERRORS[status] ?? azureError(String(status), `Fake Azure error ${status}.`),
      headers: status === 429 ? { 'retry-after': '1' } : undefined,
    }),
    handle: async (x) => {
      if (x.headers['api-key'] !== azure.apiKey) return x.json(401, ERRORS[401]);
      const v1Served = azure.v1 ?? true;

      if (x.path.startsWith('/openai/v1/')) {
        if (!v1Served) return x.json(404, ERRORS[404]);
        const op = x.path.slice('/openai/v1/'.length);
        if (x.method === 'GET' && op === 'models') return listModels(x);
        if (x.method === 'POST' && (op === 'chat/completions' || op === 'embeddings')) {
          const dep = (x.body as { model?: unknown } | null)?.model;
          return forward(x, typeof dep === 'string' ? dep : '', op);
        }
        return x.json(404, ERRORS[404]);
      }

      // The classic API needs a supported api-version on every call.
      const version = x.query.get('api-version');
      if (version === null) return x.json(404, ERRORS[404]);
      if (!versions.includes(version)) {
        return x.json(400, azureError('BadRequest', `API version not supported: ${version} (fake Azure accepts ${versions.join(', ')}).`));
      }
      if (x.method === 'GET' && x.path === '/openai/models') return listModels(x);
      const m = DEPLOYMENT_ROUTE.exec(x.path);
      if (x.method === 'POST' && m) return forward(x, decodeURIComponent(m[1]), m[2] as 'chat/completions' | 'embeddings');
      return x.json(404, ERRORS[404]);
    },
  };

  function listModels(x: Exchange): Promise<void> {
    const ids = [...new Set(Object.values(azure.deployments))];
    return x.json(200, { object: 'list', data: ids.map((id) => ({ id, object: 'model', created: 1_700_000_000, owned_by: 'system' })) });
  }

  async function forward(x: Exchange, deployment: string, op: 'chat/completions' | 'embeddings'): Promise<void> {
    const model = Object.hasOwn(azure.deployments, deployment) ? azure.deployments[deployment] : undefined;
    if (model === undefined) {
      return x.json(
        404,
        azureError('DeploymentNotFound', `The API deployment for this resource does not exist (fake Azure: "${deployment}").`),
      );
    }
    const body = { ...(x.body as Record<string, unknown>), model };
    const res = await fetch(`${inner.url}/${op}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const text = await res.text();
    if (!(res.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
      return x.json(res.status, JSON.parse(text));
    }
    const events: SseEvent[] = text
      .split('\n\n')
      .filter((block) => block.startsWith('data: '))
      .map((block) => ({ data: block.slice('data: '.length) }));
    if (azure.promptFilterChunk ?? true) {
      events.unshift({
        data: JSON.stringify({
          choices: [],
          created: 0,
          id: '',
          model: '',
          object: '',
          prompt_filter_results: [{ prompt_index: 0, content_filter_results: { hate: { filtered: false, severity: 'safe' } } }],
        }),
      });
    }
    return x.sse(events);
  }

  const outer = await startFakeServer(spec, options);
  const close = outer.close;
  return Object.assign(outer, {
    inner,
    azure,
    close: async () => {
      await Promise.all([close(), inner.close()]);
    },
  });
}
