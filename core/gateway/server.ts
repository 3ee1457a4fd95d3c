/**
 * The gateway HTTP server: plain `node:http`, one request handler, the hot path kept to auth (a hash
 * lookup), routing and the provider call. Audit rows are queued and written in batches elsewhere.
 */
import { createServer } from './node-http.ts';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createCassetteLayer } from '../cassettes/layer.ts';
import { GatewayError, internalError, notFound } from '../errors.ts';
import type { CallRow } from '../storage/audit-writer.ts';
import { AttemptsFailed, ClientGone } from './attempts.ts';
import { authenticate, RefusedKey } from './auth.ts';
import { handleBalance, handleBillingUsage, handleSubscription, handleUserInfo } from './billing-handler.ts';
import { CallAbort } from './call-abort.ts';
import { CallRecord } from './call-record.ts';
import { handleChat } from '../frontends/openai-chat/handler.ts';
import { handleResponses } from '../frontends/openai-responses/handler.ts';
import { openAIChatFrontEnd } from '../frontends/openai-chat/front-end.ts';
import { handleCountTokens, handleMessages } from '../frontends/anthropic-messages/handler.ts';
import { anthropicMessagesFrontEnd } from '../frontends/anthropic-messages/front-end.ts';
import type { FrontEnd } from '../pipeline/front-end.ts';
import type { GatewayDeps } from './deps.ts';
import { handleEmbeddings } from './embeddings-handler.ts';
import { handleAudio } from './audio-handler.ts';
import { handleCompletions } from './completions-handler.ts';
import { handleImages } from './images-handler.ts';
import { refusedWhileDraining, SHUTDOWN_MESSAGE } from './inflight.ts';
import type { InflightCalls } from './inflight.ts';
import { handleGetModel, handleListModels } from './models-handler.ts';
import { readBody, readJsonObject } from './read-body.ts';
import { capCallRow } from '../storage/field-caps.ts';
import { MAX_BODY_BYTES, truncateBody } from '../storage/audit-writer.ts';
import { DEFAULT_BODY_TIMEOUT_MS } from '../settings.ts';
import { answerClientError } from './client-error.ts';
import { capConnections, tooManyConnections } from './connection-cap.ts';
import { storageFailure } from './storage-failure.ts';
import type { RequestContext } from './request-context.ts';
import { newRequestId } from './request-id.ts';
import { sendError, sendJson } from './respond.ts';
import { isAnthropicPath, matchRoute, pathExists, SERVED_PATHS } from './routes.ts';
import type { ModelCallRoute, PlainRoute } from './routes.ts';
import { checkHost, checkOrigin, corsHeaders } from './security.ts';

export interface ServerHooks {
  /** The admin API (`/admin/*`), mounted by the caller. */
  admin?: (req: IncomingMessage, res: ServerResponse, path: string, query: URLSearchParams, cors: Record<string, string>) => Promise<void>;
  /** The dashboard page (`/ui`). */
  ui?: (req: IncomingMessage, res: ServerResponse, path: string) => Promise<void>;
  /** Every audit row, as it is queued. */
  onCall?: (row: CallRow) => void;
  /** Model calls in flight, for a graceful stop. */
  inflight?: InflightCalls;
}

export function createGatewayServer(deps: GatewayDeps, hooks: ServerHooks = {}): Server {
  const allowedHosts = new Set(deps.settings.allowedHosts.map((h) => h.toLowerCase()));
  const corsOrigins = new Set(deps.settings.corsOrigins);
  const cassettes = createCassetteLayer(
    deps,
    (row) => {
      deps.store.audit.record(row);
      hooks.onCall?.(row);
    },
    hooks.inflight,
  );
  // The whole request has no deadline (requestTimeout 0): a long upload is fine while it keeps sending,
  // and the body's silence is bounded by timeouts.bodyMs (read-body.ts). Headers must arrive within 60 s;
  // an idle keep-alive connection closes after 65 s (above the 60 s most clients keep one idle).
  const server = createServer({ keepAliveTimeout: 65_000, requestTimeout: 0, headersTimeout: 60_000 }, (req, res) => {
    handle(req, res).catch((err) => {
      if (!res.headersSent) sendError(res, storageFailure(err, deps.store) ?? err);
      else res.destroy();
    });
  });
  // Parser-level failures (bad request line, header overflow, header timeout) answer in the envelope, not Node's bare 400.
  server.on('clientError', answerClientError);
  const maxConnections = deps.settings.maxConnections;
  const cap = capConnections(server, maxConnections);
  const bodyMs = deps.settings.timeouts.bodyMs ?? DEFAULT_BODY_TIMEOUT_MS;

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const requestId = newRequestId();
    const rawUrl = req.url ?? '/';
    const q = rawUrl.indexOf('?');
    const path = q === -1 ? rawUrl : rawUrl.slice(0, q);
    let cors: Record<string, string> = {};
    if (cap.refuses(req)) {
      req.resume();
      sendFrontEndError(res, frontEndForPath(req, path), tooManyConnections(maxConnections), requestId, { 'retry-after': '1', connection: 'close' });
      return;
    }
    try {
      checkHost(req, allowedHosts);
      const origin = checkOrigin(req, corsOrigins);
      if (origin) cors = corsHeaders(origin);
    } catch (err) {
      req.resume();
      // In the envelope of the protocol the path speaks: Claude Code reads only Anthropic's on /v1/messages.
      sendFrontEndError(res, frontEndForPath(req, path), err, requestId, {});
      return;
    }
    if (req.method === 'OPTIONS') {
      res.writeHead(204, { ...cors, 'x-request-id': requestId });
      res.end();
      return;
    }
    const method = req.method ?? 'GET';
    const match = matchRoute(method, path);
    switch (match.kind) {
      case 'call':
        // Record and replay wrap whichever handler serves the route, keyed by its endpoint (core/cassettes/).
        return cassettes(req, res, { endpoint: match.endpoint, requestId, headers: cors }, (r) => modelCall(r, res, requestId, match.route, match.endpoint, cors));
      case 'plain':
        return plain(req, res, requestId, match.route, match.param, new URLSearchParams(q === -1 ? '' : rawUrl.slice(q + 1)), cors);
      case 'admin':
        if (hooks.admin) return hooks.admin(req, res, match.path, new URLSearchParams(q === -1 ? '' : rawUrl.slice(q + 1)), cors);
        break;
      case 'ui':
        if (hooks.ui) return hooks.ui(req, res, match.path);
        break;
      case 'health':
        sendJson(res, 200, { ok: true }, { ...cors, 'x-request-id': requestId });
        return;
      case 'none':
        break;
    }
    return unserved(req, res, requestId, method, path, cors);
  }

  /** A path the gateway does not serve: logged like any call, answered in the envelope the client reads. */
  function unserved(req: IncomingMessage, res: ServerResponse, requestId: string, method: string, path: string, cors: Record<string, string>): void {
    req.resume();
    const record = newRecord(req, requestId, `${method} ${path}`.slice(0, 200));
    try {
      const key = authenticate(req, deps.live);
      // A key not in memory (team mode) is not waited for: an unknown path is answered at once.
      if (key instanceof Promise) key.catch(() => undefined);
      else record.key = key;
    } catch {
      /* an unknown path is answered whatever the key */
    }
    const err = pathExists(path)
      ? new GatewayError({ status: 405, type: 'invalid_request_error', code: 'method_not_allowed', message: `${method} is not supported on ${path}.` })
      : notFound(`Unknown path ${method} ${path}. The gateway serves ${SERVED_PATHS}.`);
    const { status, ge } = sendFrontEndError(res, frontEndFor(req, null), err, requestId, cors);
    logRow(record, status, ge.type, ge.message);
  }

  function newRecord(req: IncomingMessage, requestId: string, endpoint: string): CallRecord {
    const record = new CallRecord({ requestId, startedAt: Date.now(), startedPerf: performance.now(), key: null, endpoint, stream: false });
    const ua = req.headers['user-agent'];
    if (typeof ua === 'string') record.userAgent = ua;
    // Claude Code's session header, else Codex's (`session_id`, its conversation's id).
    const session = req.headers['x-claude-code-session-id'] ?? req.headers.session_id;
    if (typeof session === 'string') record.sessionId = session;
    return record;
  }

  function logRow(record: CallRecord, status: number, errorType: string | null, errorMessage: string | null): void {
    record.responseBody = boundedBody(record.responseBody);
    const row = capCallRow(record.toRow(status, errorType, errorMessage, deps.settings.audit.storeBodies, deps.prices.dataVersion()));
    deps.store.audit.record(row);
    hooks.onCall?.(row);
  }

  function context(req: IncomingMessage, res: ServerResponse, requestId: string, record: CallRecord, cors: Record<string, string>): RequestContext {
    const abort = new CallAbort();
    res.on('close', () => {
      if (!res.writableFinished) abort.abort();
    });
    // A call that waits for a pooled upstream connection says so: a header, and a log line.
    const onQueued = (waitedMs: number, origin: string): void => {
      if (!res.headersSent) res.setHeader('x-gateway-queued-ms', String(waitedMs));
      console.error(`[gateway] ${requestId} waited ${waitedMs} ms for a connection to ${origin} (pool full)`);
    };
    return { deps, req, res, requestId, key: undefined as never, record, abort, baseHeaders: { ...cors }, onQueued };
  }

  async function modelCall(req: IncomingMessage, res: ServerResponse, requestId: string, route: ModelCallRoute, endpoint: string, cors: Record<string, string>): Promise<void> {
    const record = newRecord(req, requestId, endpoint);
    const ctx = context(req, res, requestId, record, cors);
    const frontEnd = frontEndFor(req, route);
    let status = 200;
    let errorType: string | null = null;
    let errorMessage: string | null = null;
    hooks.inflight?.enter(ctx);
    // The audit thread starts with the first call (not at start: an idle gateway keeps none) while it runs.
    deps.store.audit.warm?.();
    try {
      if (hooks.inflight?.draining) {
        res.setHeader('connection', 'close');
        throw refusedWhileDraining();
      }
      const key = authenticate(req, deps.live);
      ctx.key = key instanceof Promise ? await key : key;
      record.key = ctx.key;
      if (route === 'transcriptions' || route === 'translations') {
        // Multipart: the raw bytes are forwarded as sent; the handler reads the fields it routes on.
        await handleAudio(ctx, route, await readBody(req, deps.settings.bodyLimitBytes, bodyMs));
      } else {
        const { json, text, bytes } = await readJsonObject(req, deps.settings.bodyLimitBytes, bodyMs);
        recordRequestBody(record, text, bytes);
        // Two `"model"` keys: JSON.parse keeps the last (what the allow-list and the price see), an upstream may
        // read the first. Such a body is sent as the gateway parsed it, never as the client wrote it (~1 µs at 100 KB).
        if (!twoModelKeys(text)) {
          ctx.bodyText = text;
          ctx.bodyBytes = bytes;
        }
        record.stream = json.stream === true;
        // Named on the row even when the front end refuses the body before the pipeline would name it.
        if (typeof json.model === 'string') record.modelRequested = json.model.slice(0, 200);
        if (route === 'chat') await handleChat(ctx, json);
        else if (route === 'responses') await handleResponses(ctx, json);
        else if (route === 'messages') await handleMessages(ctx, json);
        else if (route === 'count-tokens') await handleCountTokens(ctx, json);
        else if (route === 'completions') await handleCompletions(ctx, json);
        else if (route === 'images') await handleImages(ctx, json);
        else await handleEmbeddings(ctx, json);
      }
      if (record.outcome) ({ status, errorType, errorMessage } = record.outcome);
    } catch (err) {
      if (ctx.cut && (err instanceof ClientGone || ctx.abort.signal.aborted)) {
        // Cut by a stopping gateway: the client is still there and gets an error, in the stream when it began.
        status = 503;
        errorType = 'api_error';
        errorMessage = SHUTDOWN_MESSAGE;
        const body = { error: { message: SHUTDOWN_MESSAGE, type: 'api_error', param: null, code: 'gateway_shutting_down' } };
        if (!res.headersSent) sendJson(res, 503, body, { ...ctx.baseHeaders, 'x-request-id': requestId, connection: 'close' });
        else if (!res.writableEnded && !res.destroyed) res.end(`data: ${JSON.stringify(body)}\n\n`);
      } else if (err instanceof ClientGone || (ctx.abort.signal.aborted && !(err instanceof GatewayError) && !(err instanceof AttemptsFailed))) {
        status = 499;
        errorType = 'client_closed';
        errorMessage = 'The client closed the connection before the response was complete.';
        if (!res.writableEnded) res.destroy();
      } else {
        const failure = storageFailure(err, deps.store) ?? (err instanceof AttemptsFailed ? err.error : err);
        if (err instanceof AttemptsFailed) record.attempts = err.attempts;
        // A disabled or deleted key's refused calls are found under that key (`gateway logs --key NAME`).
        if (err instanceof RefusedKey) record.key = err.key;
        // Refused before admission (a bad body): a key with limits still sees where it stands, as on every answer.
        if (ctx.key && (ctx.key.rpm || ctx.key.tpm) && ctx.baseHeaders['x-ratelimit-limit-requests'] === undefined && ctx.baseHeaders['x-ratelimit-limit-tokens'] === undefined) {
          await addRateLimitState(ctx).catch(() => undefined);
        }
        if (!req.complete) {
          // The rest of the body is not wanted: answer, then close rather than drain a trickle forever.
          if (!res.headersSent) res.setHeader('connection', 'close');
          req.resume();
        }
        const sent = sendFrontEndError(res, frontEnd, failure, requestId, ctx.baseHeaders);
        status = sent.status;
        errorType = sent.ge.type;
        errorMessage = sent.ge.message;
      }
    } finally {
      logRow(record, status, errorType, errorMessage);
      hooks.inflight?.leave(ctx);
    }
  }

  /** The key's rate-limit headers, as they stand, without counting this request. */
  async function addRateLimitState(ctx: RequestContext): Promise<void> {
    const peek = deps.limiter.peek(ctx.key.id, { rpm: ctx.key.rpm, tpm: ctx.key.tpm });
    Object.assign(ctx.baseHeaders, (peek instanceof Promise ? await peek : peek).headers);
  }

  async function plain(req: IncomingMessage, res: ServerResponse, requestId: string, route: PlainRoute, param: string | undefined, query: URLSearchParams, cors: Record<string, string>): Promise<void> {
    req.resume();
    const record = new CallRecord({ requestId, startedAt: Date.now(), startedPerf: performance.now(), key: null, endpoint: route, stream: false });
    const ctx = context(req, res, requestId, record, cors);
    try {
      const key = authenticate(req, deps.live);
      ctx.key = key instanceof Promise ? await key : key;
      // A key with limits sees its rate-limit state on every response; only model calls count against it.
      if (ctx.key.rpm || ctx.key.tpm) await addRateLimitState(ctx);
      switch (route) {
        case 'models':
          return handleListModels(ctx, frontEndFor(req, null).protocol === 'anthropic-messages');
        case 'model':
          return handleGetModel(ctx, param ?? '');
        case 'balance':
          return await handleBalance(ctx);
        case 'user-info':
          return await handleUserInfo(ctx);
        case 'subscription':
          return await handleSubscription(ctx);
        case 'billing-usage':
          return await handleBillingUsage(ctx, query);
      }
    } catch (err) {
      sendFrontEndError(res, frontEndFor(req, null), storageFailure(err, deps.store) ?? err, requestId, ctx.baseHeaders);
    }
  }

  return server;
}

/**
 * A body for the audit row: as it is (the audit thread cuts it to 64 KiB and scrubs it), unless it is so
 * large that carrying it to that thread, and to the row's listeners, would cost more than cutting it here.
 */
function boundedBody(text: string | null): string | null {
  return text !== null && text.length > 4 * MAX_BODY_BYTES ? truncateBody(text) : text;
}

/**
 * The request body for the audit row, which the audit thread cuts to 64 KiB and scrubs. One that may need
 * cutting goes as the client's bytes, which that thread cuts and stores without encoding the text again: only
 * the 64 KiB it can keep, with the whole length for the truncation marker (a 100 KB prompt went whole, and was
 * copied into the message and out again). A huge one is cut here (`boundedBody`). The bytes are always a copy:
 * the row's buffer is moved to the audit thread, while the client's may still be on its way to the provider.
 */
function recordRequestBody(record: CallRecord, text: string, bytes: Buffer): void {
  if (text.length * 3 <= MAX_BODY_BYTES || text.length > 4 * MAX_BODY_BYTES) {
    record.requestBody = boundedBody(text);
    return;
  }
  record.requestBytes = new Uint8Array(bytes.subarray(0, MAX_BODY_BYTES));
  if (bytes.length > MAX_BODY_BYTES) record.requestBytesTotal = bytes.length;
}

/** The protocol a client speaks: its route's, else Anthropic when it sends Anthropic's headers, else OpenAI. */
function frontEndFor(req: IncomingMessage, route: ModelCallRoute | null): FrontEnd {
  if (route === 'messages' || route === 'count-tokens') return anthropicMessagesFrontEnd;
  if (route !== null) return openAIChatFrontEnd;
  return req.headers['anthropic-version'] !== undefined || req.headers['x-api-key'] !== undefined ? anthropicMessagesFrontEnd : openAIChatFrontEnd;
}

/** The protocol of a request not yet routed: Anthropic's on its paths, else as `frontEndFor` tells from the headers. */
function frontEndForPath(req: IncomingMessage, path: string): FrontEnd {
  return isAnthropicPath(path) ? anthropicMessagesFrontEnd : frontEndFor(req, null);
}

/** Sends an error in the front end's envelope; returns the status the client saw. */
function sendFrontEndError(res: ServerResponse, frontEnd: FrontEnd, err: unknown, requestId: string, headers: Record<string, string>): { status: number; ge: GatewayError } {
  if (!(err instanceof GatewayError)) console.error('[gateway] internal error:', err instanceof Error ? err.stack : err);
  const ge = err instanceof GatewayError ? err : internalError();
  if (res.headersSent) {
    res.destroy();
    return { status: ge.status, ge };
  }
  const r = frontEnd.error(ge, requestId);
  res.writeHead(r.status, { ...headers, ...r.headers, 'x-request-id': requestId, 'content-type': 'application/json', 'content-length': Buffer.byteLength(r.body) });
  res.end(r.body);
  return { status: r.status, ge };
}

export async function listen(server: Server, port: number, host: string): Promise<AddressInfo> {
  await new Promise<void>((resolve, reject) => {
    const onError = (err: NodeJS.ErrnoException) => {
      server.off('listening', onListening);
      reject(err);
    };
    const onListening = () => {
      server.off('error', onError);
      resolve();
    };
    server.once('error', onError);
    server.once('listening', onListening);
    server.listen(port, host);
  });
  return server.address() as AddressInfo;
}

const MODEL_KEY = '"model"';
/** Whether the key `"model"` appears twice (a property of that name in a tool's schema counts too: then the body is re-serialised, no harm). */
function twoModelKeys(text: string): boolean {
  const first = text.indexOf(MODEL_KEY);
  return first !== -1 && text.indexOf(MODEL_KEY, first + MODEL_KEY.length) !== -1;
}
