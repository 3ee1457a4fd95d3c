/** Top of the dashboard: where to point tools, how to get a key, and what was spent. */
import React from 'react';
import { Box, Text } from 'ink';
import { money } from './format.ts';

const h = React.createElement;

export interface HeaderProps {
  baseUrl: string;
  /** The key `gateway start --demo` just created, if any: the dashboard covers the line that printed it. */
  createdKey?: { name: string; secret: string } | null;
  live: boolean;
  spend: { today_usd: number; month_usd: number } | null;
  priceVersion: string | null;
}

export function Header(p: HeaderProps): React.ReactElement {
  const keyLine = p.createdKey
    ? h(Text, { wrap: 'truncate-end' }, h(Text, { dimColor: true }, `Key "${p.createdKey.name}" (new): `), h(Text, { color: 'yellow' }, p.createdKey.secret), h(Text, { dimColor: true }, '  ·  more: gateway keys create --name NAME'))
    : h(Text, { wrap: 'truncate-end', dimColor: true }, 'Get a key: gateway keys create --name NAME  ·  or  eval "$(gateway env --new-key NAME)"');
  return h(
    Box,
    { flexDirection: 'column' },
    h(
      Text,
      { wrap: 'truncate-end' },
      h(Text, { bold: true, color: 'cyan' }, 'gateway '),
      h(Text, { dimColor: true }, 'base URL '),
      h(Text, { bold: true }, p.baseUrl),
      '  ',
      p.live ? h(Text, { color: 'green' }, '● live') : h(Text, { color: 'yellow' }, '○ connecting'),
    ),
    keyLine,
    h(
      Text,
      { wrap: 'truncate-end' },
      h(Text, { bold: true }, 'Spend '),
      h(Text, { dimColor: true }, 'today '),
      h(Text, { bold: true }, p.spend ? money(p.spend.today_usd) : '…'),
      h(Text, { dimColor: true }, '   this month '),
      h(Text, { bold: true }, p.spend ? money(p.spend.month_usd) : '…'),
      p.priceVersion ? h(Text, { dimColor: true }, `   prices ${p.priceVersion}`) : null,
    ),
  );
}
