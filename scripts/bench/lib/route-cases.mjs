// Case 5 (security-route.mjs), the metrics overhead (metrics-overhead.mjs), the span export
// overhead (telemetry-overhead.mjs) and the petstore on 1 and 2 worker processes
// (workers-scaling.mjs), the chain past its capacity with limit.yml (overload.mjs): scripts run
// as processes; their rows join the table under a prefix.
import { runSubBench } from './sub-bench.mjs';

const subBench = (name, prefix, extraArgs) => async (ctx) => {
  const { opts, log } = ctx;
  const args = [
    ...(opts.quick ? ['--quick'] : []),
    ...(opts.explicitDuration ? ['--duration', String(opts.durationS)] : []),
    ...(opts.explicitConnections ? ['--connections', String(opts.connections)] : []),
    ...extraArgs,
  ];
  log(`${prefix}: node scripts/bench/${name}.mjs ${args.join(' ')}`);
  const { rows, code } = await runSubBench(name, args, log);
  if (code === 'missing') throw new Error(`scripts/bench/${name}.mjs is not there`);
  if (code !== 0) throw new Error(`${name}.mjs exited with ${code}`);
  return rows.map((row) => ({
    ...row,
    case: `${prefix}: ${row.case}`,
    baseline: row.baseline ? `${prefix}: ${row.baseline}` : null,
  }));
};

export const route = subBench('security-route', 'route', []);
export const metrics = subBench('metrics-overhead', 'metrics', []);
export const telemetry = subBench('telemetry-overhead', 'telemetry', []);
export const workers = subBench('workers-scaling', 'workers', []);
export const overload = subBench('overload', 'overload', []);
