/**
 * The cassette layer at the gateway's HTTP edge. It wraps whatever handler serves a model-call route,
 * for every protocol, and decides per request (the key's own cassette, else the gateway's):
 * - no cassette: the handler runs untouched (the cost is one key lookup);
 * - `replay`: the answer comes from the cassette, or a `cassette_miss` 404; no provider is contacted;
 * - `replay-or-record`: a hit replays, a miss runs the handler and records what it wrote;
 * - `record`: the handler runs and what it wrote is recorded.
 * A replay contacts no provider and costs nothing: its audit row has cost 0 and `replayed`, and its headers
 * say what the original cost. It is admitted like a live call where that still means something (the
 * key's allow-list and requests-per-minute limit; no budget or token window, since nothing is spent), and
 * counted in flight so a graceful stop waits for it (and refuses new ones while draining). Requests without a valid key, or whose body
 * cannot be read as JSON or multipart, go to the handler, which refuses them as usual; they are never
 * recorded.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { GatewayError } from '../errors.ts';
import { admitReplay } from '../gateway/admission.ts';
import { authenticate, bearerToken } from '../gateway/auth.ts';
import { CallAbort } from '../gateway/call-abort.ts';
import { isAnthropicPath } from '../gateway/routes.ts';
import { CallRecord } from '../gateway/call-record.ts';
import type { GatewayDeps } from '../gateway/deps.ts';
import { cutByShutdown, refusedWhileDraining } from '../gateway/inflight.ts';
import type { InflightCalls } from '../gateway/inflight.ts';
import type { RequestContext } from '../gateway/request-context.ts';
import { readBody } from '../gateway/read-body.ts';
import { scrubSecrets } from '../gateway/scrub.ts';
import { DEFAULT_BODY_TIMEOUT_MS } from '../settings.ts';
import type { CallRow } from '../storage/audit-writer.ts';
import { capCallRow } from '../storage/field-caps.ts';
import type { StoredKey } from '../storage/keys-repo.ts';
import { answerFacts } from './answer-facts.ts';
import { AuditWatch } from './audit-watch.ts';
import { requestWithBody } from './buffered-request.ts';
import { canonicalRequest } from './canonical.ts';
import type { CanonicalRequest } from './canonical.ts';
import { encodeBody, encodeChunk, interactionBody } from './format.ts';
import type { Interaction } from './format.ts';
import { cassetteMiss, sendProtocolError } from './miss-error.ts';
import { parseCassetteSpec } from './mode.ts';
import type { CassetteConfig } from './mode.ts';
import { teeResponse } from './recorder.ts';
import type { Recording } from './recorder.ts';
import { writeReplay } from './replayer.ts';
import { CassetteStore } from './store.ts';

interface EdgeCall {
  /** The route's endpoint path (`/v1/chat/completions`, `/v1/messages`, …): part of what is matched. */
  endpoint: string;
  requestId: string;
  /** Headers every response to this request carries (CORS). */
  headers: Record<string, string>;
}

/** Runs the route's normal handler on a request (the original, or one whose body was already read). */
type ModelCallHandler = (req: IncomingMessage) => Promise<void>;

type CassetteLayer = (req: IncomingMessage, res: ServerResponse, call: EdgeCall, handler: ModelCallHandler) => Promise<void>;

/**
 * Answers worth replaying: successes and the client's own mistakes that an upstream reported. Local
 * states of a key or of the machine (401, 402, 403, 413, 429, 5xx) are not facts about the request.
 */
const recordable = (status: number): boolean => status < 400 || status === 400 || status === 404 || status === 422;

export function createCassetteLayer(deps: GatewayDeps, emit: (row: CallRow) => void, inflight?: InflightCalls): CassetteLayer {
  const gatewayWide: CassetteConfig | null = deps.settings.cassettes ?? null;
  const stores = new Map<string, CassetteStore>();
  const storeFor = (dir: string): CassetteStore => {
    let s = stores.get(dir);
    if (!s) stores.set(dir, (s = new CassetteStore(dir)));
    return s;
  };

  // Whether any key carries its own cassette, recomputed only when the live configuration reloads.
  let keysSeenAt = Number.NaN;
  let anyKeyCassette = false;
  const someKeyHasCassette = (): boolean => {
    if (deps.live.version !== keysSeenAt) {
      keysSeenAt = deps.live.version;
      anyKeyCassette = [...deps.live.keysByHash.values()].some((k) => Boolean(k.cassette) && k.state !== 'deleted');
    }
    return anyKeyCassette;
  };

  function cassetteFor(key: StoredKey): CassetteConfig | null {
    if (key.cassette) {
      try {
        return parseCassetteSpec(key.cassette);
      } catch {
        return gatewayWide;
      }
    }
    return gatewayWide;
  }

  const audited = new AuditWatch(deps.store.audit);

  async function secretsOf(req: IncomingMessage): Promise<string[]> {
    const out: string[] = [];
    const token = bearerToken(req);
    if (token) out.push(token);
    for (const p of deps.live.providers) out.push(...(await deps.providerKeys.knownSecrets(p.settings).catch(() => [])));
    return out;
  }

  function row(record: CallRecord, status: number, error: GatewayError | null, extra: Partial<CallRow>): CallRow {
    const base = record.toRow(status, error?.type ?? null, error?.message ?? null, deps.settings.audit.storeBodies, deps.prices.dataVersion());
    return capCallRow({ ...base, ...extra });
  }

  async function replay(req: IncomingMessage, res: ServerResponse, call: EdgeCall, record: CallRecord, key: StoredKey, canonical: CanonicalRequest, hit: Interaction): Promise<void> {
    const facts = answerFacts(hit);
    record.model = hit.headers['x-gateway-model'] ?? null;
    record.provider = hit.headers['x-gateway-provider'] ?? null;
    const ctx: RequestContext = { deps, req, res, requestId: call.requestId, key, record, abort: new CallAbort(), baseHeaders: { ...call.headers } };
    res.on('close', () => {
      if (!res.writableFinished) ctx.abort.abort();
    });
    inflight?.enter(ctx);
    let release: (() => void) | null = null;
    try {
      if (inflight?.draining) {
        res.setHeader('connection', 'close');
        throw refusedWhileDraining();
      }
      const admitted = admitReplay(ctx, canonical.model, record.model);
      release = admitted instanceof Promise ? await admitted : admitted;
      if (hit.chunks === undefined) record.responseBody = interactionBody(hit).toString('utf8');
      // This call's own id, and Anthropic's copy of it where the protocol has one (a cassette keeps neither).
      const ids: Record<string, string> = { 'x-request-id': call.requestId };
      if (isAnthropicPath(call.endpoint)) ids['request-id'] = call.requestId;
      const complete = await writeReplay(res, hit, { ...ctx.baseHeaders, ...ids }, ctx.abort.signal);
      if (!complete) {
        // Cut by a stopping gateway, or the client left: an unfinished replay is recorded as such and costs nothing.
        if (!res.writableEnded && !res.destroyed) res.end();
        const ge = ctx.cut ? cutByShutdown() : null;
        emit(row(record, ge ? 503 : 499, ge, ge ? { replayed: true, stream: canonical.stream } : { errorType: 'client_closed', errorMessage: 'The client closed the connection before the response was complete.', replayed: true, stream: canonical.stream }));
        return;
      }
      emit(
        row(record, hit.status, null, {
          inputTokens: facts.inputTokens,
          outputTokens: facts.outputTokens,
          // Free: a replay spends nothing against any budget. What it would have cost is in its headers.
          costUsd: 0,
          pricing: 'priced',
          priceVersion: null,
          stream: canonical.stream,
          replayed: true,
        }),
      );
    } catch (err) {
      const ge = sendProtocolError(res, call.endpoint, err, { ...ctx.baseHeaders, 'x-request-id': call.requestId });
      emit(row(record, ge.status, ge, {}));
    } finally {
      release?.();
      inflight?.leave(ctx);
    }
  }

  async function recordAnswer(cassette: CassetteConfig, canonical: CanonicalRequest, rec: Recording, audited: CallRow | null, secrets: string[]): Promise<void> {
    const stream = (rec.headers['content-type'] ?? '').startsWith('text/event-stream');
    const body: Pick<Interaction, 'json' | 'text' | 'base64' | 'chunks'> = stream ? { chunks: rec.chunks.map(encodeChunk) } : encodeBody(Buffer.concat(rec.chunks));
    const draft = { recorded_at: new Date().toISOString(), status: rec.status, headers: rec.headers, ...body };
    const interaction: Interaction = { ...draft, cost_usd: answerFacts(draft).costUsd ?? audited?.costUsd ?? null };
    storeFor(cassette.dir).record(canonical, interaction, { replace: cassette.mode === 'record', scrub: (t) => scrubSecrets(t, secrets) });
  }

  // Without a cassette anywhere the handler runs as it is: no async frame of this layer on every call.
  return (req, res, call, handler) => (!gatewayWide && !someKeyHasCassette() ? handler(req) : withCassette(req, res, call, handler));

  async function withCassette(...[req, res, call, handler]: Parameters<CassetteLayer>): Promise<void> {
    let key: StoredKey;
    try {
      const k = authenticate(req, deps.live);
      key = k instanceof Promise ? await k : k;
    } catch {
      return handler(req);
    }
    const cassette = cassetteFor(key);
    if (!cassette) return handler(req);

    const record = new CallRecord({ requestId: call.requestId, startedAt: Date.now(), startedPerf: performance.now(), key, endpoint: call.endpoint, stream: false });
    record.secrets.push(bearerToken(req));
    let raw: Buffer;
    try {
      raw = await readBody(req, deps.settings.bodyLimitBytes, deps.settings.timeouts.bodyMs ?? DEFAULT_BODY_TIMEOUT_MS);
    } catch (err) {
      const ge = sendProtocolError(res, call.endpoint, err, { ...call.headers, 'x-request-id': call.requestId });
      emit(row(record, ge.status, ge, {}));
      return;
    }
    const canonical = canonicalRequest(call.endpoint, req.headers['content-type'], raw);
    if (!canonical) return handler(requestWithBody(req, raw));
    record.modelRequested = canonical.model;
    record.stream = canonical.stream;
    record.requestBody = JSON.stringify(canonical.body);
    const store = storeFor(cassette.dir);

    if (cassette.mode !== 'record') {
      let hit: ReturnType<CassetteStore['next']>;
      try {
        hit = store.next(canonical, cassette.mode === 'replay');
      } catch (err) {
        // A cassette file that does not parse: say which, never fall through to a provider in replay mode.
        const ge = new GatewayError({ status: 500, type: 'api_error', code: 'cassette_unreadable', message: (err as Error).message, retryable: false });
        sendProtocolError(res, call.endpoint, ge, { ...call.headers, 'x-request-id': call.requestId });
        emit(row(record, ge.status, ge, {}));
        return;
      }
      if (hit) return replay(req, res, call, record, key, canonical, hit.interaction);
      if (cassette.mode === 'replay') {
        const ge = cassetteMiss(canonical, cassette.dir, store.closest(canonical));
        sendProtocolError(res, call.endpoint, ge, { ...call.headers, 'x-request-id': call.requestId });
        emit(row(record, ge.status, ge, {}));
        return;
      }
    }

    const written = teeResponse(res);
    audited.watch(call.requestId);
    let handlerRow: CallRow | null;
    try {
      await handler(requestWithBody(req, raw));
    } finally {
      handlerRow = audited.take(call.requestId);
    }
    const rec = written();
    if (!res.writableEnded || res.destroyed || !recordable(rec.status) || (handlerRow !== null && handlerRow.status !== rec.status)) return;
    try {
      await recordAnswer(cassette, canonical, rec, handlerRow, await secretsOf(req));
    } catch (err) {
      // The client has its answer already; a cassette that cannot be written is the developer's to fix.
      console.error(`[gateway] could not record to cassette ${cassette.dir}: ${(err as Error).message}`);
    }
  }
}
