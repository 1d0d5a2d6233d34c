import type { K8sObject } from './objects.js';
import { podSecurityProblems, shutdownProblems } from './pod-checks.js';
import { secretInConfigMapProblems } from './secret-checks.js';
import { portProblems, referenceProblems, selectorProblems } from './wiring-checks.js';

/** Every problem of every check, for an overlay that must have none. */
export function allProblems(objects: K8sObject[], secrets: K8sObject[]): string[] {
  const all = [...objects, ...secrets];
  return [
    ...portProblems(all),
    ...referenceProblems(all),
    ...selectorProblems(all),
    ...secretInConfigMapProblems(objects, secrets),
    ...shutdownProblems(all),
    ...podSecurityProblems(all),
  ];
}
