/** Ids of the objects the gateway mints for a Responses client (`resp_`, `msg_`, `fc_`, `rs_`, `ctc_`). */
import { randomBytes } from 'node:crypto';

export type IdPrefix = 'resp' | 'msg' | 'fc' | 'rs' | 'ctc';

export const mintId = (prefix: IdPrefix): string => `${prefix}_${randomBytes(16).toString('hex')}`;
