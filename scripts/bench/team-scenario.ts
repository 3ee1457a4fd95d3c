/**
 * The `team` scenario of `npm run bench`: runs team.ts as a child process (on the client core; the
 * gateways it starts go on the server core) against the run's fake upstream, and adds its table to the
 * report and its rows to the results JSON. Skipped, with a note, when PostgreSQL or Redis is not installed.
 */
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { teamServersInstalled } from '../../test/team/servers.ts';
import { BENCH_DIR, OUT_DIR } from './common.ts';
import type { Scenario } from './context.ts';
import { spawnNode } from './proc.ts';
import { formatTeam, type TeamBenchResult } from './team.ts';

const TEAM_TIMEOUT_MS = 6 * 60_000;

export const teamScenario: Scenario = {
  name: 'team',
  run: async (ctx) => {
    if (!teamServersInstalled()) {
      const note = 'team: skipped, PostgreSQL and Redis are not installed (apt-get install -y postgresql redis-server).';
      ctx.log(note);
      ctx.warnings.push(note);
      ctx.sections.push(`### Team mode\n\nSkipped: PostgreSQL and Redis are not installed (\`apt-get install -y postgresql redis-server\`).`);
      return;
    }
    const jsonFile = path.join(OUT_DIR, 'team-results.json');
    mkdirSync(OUT_DIR, { recursive: true });
    rmSync(jsonFile, { force: true });
    const calls = Math.max(500, Math.round(ctx.cfg.seconds * 300));
    const child = spawnNode({
      name: 'team',
      cpu: ctx.clientCpu,
      args: [
        path.join(BENCH_DIR, 'team.ts'),
        '--calls',
        String(calls),
        '--concurrency',
        String(ctx.cfg.concurrency),
        '--upstream',
        `${ctx.upBase}/v1`,
        '--json',
        jsonFile,
        ...(ctx.serverCpu === null ? [] : ['--cpu', String(ctx.serverCpu)]),
      ],
    });
    const timer = setTimeout(() => void child.stop(), TEAM_TIMEOUT_MS);
    const code = await child.exited;
    clearTimeout(timer);
    if (!existsSync(jsonFile)) throw new Error(`team bench exited with ${code} and no results:\n${child.tail()}`);
    const result = JSON.parse(readFileSync(jsonFile, 'utf8')) as TeamBenchResult;
    ctx.team = result;
    ctx.sections.push(formatTeam(result));
    const failed = result.rows.filter((r) => r.errors > 0);
    for (const r of failed) ctx.problems.push(`team: ${r.label}: ${r.errors} of ${r.calls} calls failed`);
  },
};
