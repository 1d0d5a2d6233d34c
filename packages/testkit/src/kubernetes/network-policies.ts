import { byKind, workloads, type K8sObject, type NetworkPolicyObject } from './objects.js';
import { isEmptySelector, podLabels, selects } from './pods.js';

export const OUTSIDE = 'outside';

/**
 * Who may open a connection to each workload's container ports under the NetworkPolicies, as a
 * network plugin enforcing them decides (ingress only): a pod selected by no Ingress policy
 * takes every connection; otherwise a peer gets in when a rule of a policy selecting the pod
 * lets it in on that port. Sources are the workloads of the namespace and `outside` (any
 * address outside the namespace). Result: `workload:port` -> sorted sources.
 */
export function reachability(objects: K8sObject[]): Record<string, string[]> {
  const ws = workloads(objects);
  const policies = byKind<NetworkPolicyObject>(objects, 'NetworkPolicy').filter((n) =>
    (n.spec.policyTypes ?? ['Ingress']).includes('Ingress'),
  );
  const out: Record<string, string[]> = {};
  for (const target of ws) {
    const c = target.spec.template.spec.containers[0];
    const applying = policies.filter((n) => selects(n.spec.podSelector, podLabels(target)));
    for (const port of c.ports ?? []) {
      const sources = [OUTSIDE, ...ws.map((w) => w.metadata.name)].filter((source) => {
        if (applying.length === 0) return true;
        const labels =
          source === OUTSIDE ? undefined : podLabels(ws.find((w) => w.metadata.name === source)!);
        return applying.some((n) =>
          (n.spec.ingress ?? []).some((rule) => {
            const portOk =
              !rule.ports ||
              rule.ports.some(
                (p) =>
                  p.port === undefined || p.port === port.containerPort || p.port === port.name,
              );
            const peerOk =
              !rule.from ||
              rule.from.length === 0 ||
              rule.from.some((peer) =>
                labels === undefined
                  ? !!peer.ipBlock ||
                    (!!peer.namespaceSelector && isEmptySelector(peer.namespaceSelector))
                  : (peer.podSelector !== undefined && selects(peer.podSelector, labels)) ||
                    (peer.namespaceSelector !== undefined && !peer.podSelector),
              );
            return portOk && peerOk;
          }),
        );
      });
      out[`${target.metadata.name}:${port.containerPort}`] = sources.sort();
    }
  }
  return out;
}
