/**
 * Localhost hardening. A web page can make a browser send requests to 127.0.0.1; two checks keep it
 * out: the `Host` header must be a loopback name (or one the user configured), which defeats DNS
 * rebinding, and a browser `Origin` must be our own or a configured one (no CORS otherwise).
 */
import type { IncomingMessage } from 'node:http';
import { forbidden } from '../errors.ts';

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]', '::1']);

/** `host:port` → host, handling IPv6 brackets. */
export function hostName(hostHeader: string): string {
  const h = hostHeader.trim().toLowerCase();
  if (h.startsWith('[')) {
    const end = h.indexOf(']');
    return end === -1 ? h : h.slice(0, end + 1);
  }
  const colon = h.lastIndexOf(':');
  return colon === -1 ? h : h.slice(0, colon);
}

export function isAllowedHost(hostHeader: string | undefined, allowed: ReadonlySet<string>): boolean {
  if (!hostHeader) return false;
  const name = hostName(hostHeader);
  // A configured entry may be a bare name ("gateway.lan") or a name with its port ("gateway.lan:4141").
  return LOOPBACK_HOSTS.has(name) || name.endsWith('.localhost') || /^127\.\d+\.\d+\.\d+$/.test(name) || allowed.has(name) || allowed.has(hostHeader.trim().toLowerCase());
}

export function checkHost(req: IncomingMessage, allowed: ReadonlySet<string>): void {
  if (!isAllowedHost(req.headers.host, allowed)) {
    throw forbidden(
      `Host "${req.headers.host ?? ''}" is not allowed. The gateway answers loopback names only; add others to "allowedHosts" in settings.json.`,
      'host_not_allowed',
    );
  }
}

/** Our own origin (the dashboard page) is always fine; others only when configured. */
export function originAllowed(origin: string, req: IncomingMessage, corsOrigins: ReadonlySet<string>): boolean {
  if (corsOrigins.has(origin) || corsOrigins.has('*')) return true;
  try {
    const u = new URL(origin);
    return u.host.toLowerCase() === (req.headers.host ?? '').toLowerCase();
  } catch {
    return false;
  }
}

/** Throws on a refused Origin; returns the origin to send CORS headers to, or null for none. */
export function checkOrigin(req: IncomingMessage, corsOrigins: ReadonlySet<string>): string | null {
  const origin = req.headers.origin;
  if (origin === undefined) return null;
  if (!originAllowed(origin, req, corsOrigins)) {
    throw forbidden(`Origin "${origin}" is not allowed. Add it to "corsOrigins" in settings.json to let that page call the gateway.`, 'origin_not_allowed');
  }
  // Our own page is same-origin and needs no CORS headers: only configured origins get them.
  return corsOrigins.has(origin) || corsOrigins.has('*') ? origin : null;
}

export function corsHeaders(origin: string): Record<string, string> {
  return {
    'access-control-allow-origin': origin,
    'access-control-allow-credentials': 'true',
    'access-control-allow-headers': 'authorization, content-type, x-api-key, openai-organization, openai-project, x-stainless-os, x-stainless-lang, x-stainless-package-version, x-stainless-runtime, x-stainless-runtime-version, x-stainless-arch, x-stainless-retry-count, x-stainless-timeout, x-stainless-helper-method, x-stainless-async, anthropic-version, anthropic-beta, anthropic-dangerous-direct-browser-access',
    'access-control-allow-methods': 'GET, POST, OPTIONS',
    'access-control-expose-headers': 'x-request-id, x-gateway-cost-usd, x-gateway-provider, x-gateway-model, x-gateway-attempts, x-gateway-pricing, retry-after, x-ratelimit-limit-requests, x-ratelimit-remaining-requests, x-ratelimit-reset-requests, x-ratelimit-limit-tokens, x-ratelimit-remaining-tokens, x-ratelimit-reset-tokens, x-should-retry, retry-after-ms, request-id',
    'access-control-max-age': '600',
    vary: 'Origin',
  };
}
