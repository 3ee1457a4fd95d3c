import { randomBytes } from 'node:crypto';

/** `req_` + 24 hex characters: the audit row's id and the `x-request-id` header. */
export const newRequestId = (): string => `req_${randomBytes(12).toString('hex')}`;
