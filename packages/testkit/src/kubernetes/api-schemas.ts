import { createRequire } from 'node:module';
import path from 'node:path';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler';
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { StatefulSet } from 'kubernetes-models/apps/v1/StatefulSet';
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicy';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import { ConfigMap } from 'kubernetes-models/v1/ConfigMap';
import { Namespace } from 'kubernetes-models/v1/Namespace';
import { Secret } from 'kubernetes-models/v1/Secret';
import { Service } from 'kubernetes-models/v1/Service';
import type * as TypeScript from 'typescript';
import { idOf, type K8sObject } from './objects.js';

// The Kubernetes API schemas, offline: kubernetes-models' classes (ES modules) for the OpenAPI
// schema of each kind, and its TypeScript types for the fields the API does not know. The
// TypeScript compiler is loaded when first used (it is large).

const load = createRequire(import.meta.filename);

interface Validatable {
  validate(): void;
}

/** kubernetes-models' class, module and type name for each kind the manifests use. */
const MODELS: Record<
  string,
  { Model: new (data: never) => Validatable; module: string; kind: string }
> = {};
for (const [apiVersion, Model] of [
  ['v1', Namespace],
  ['v1', ConfigMap],
  ['v1', Secret],
  ['v1', Service],
  ['apps/v1', Deployment],
  ['apps/v1', StatefulSet],
  ['policy/v1', PodDisruptionBudget],
  ['networking.k8s.io/v1', NetworkPolicy],
  ['autoscaling/v2', HorizontalPodAutoscaler],
] as const) {
  const kind = Model.name;
  MODELS[`${apiVersion}/${kind}`] = {
    Model,
    module: `kubernetes-models/${apiVersion}/${kind}`,
    kind,
  };
}

/**
 * Every object against the OpenAPI schema of its kind (kubernetes-models: types, formats such
 * as quantities, required fields, enums). A kind without a schema here is a problem too.
 */
export function schemaProblems(objects: K8sObject[]): string[] {
  const problems: string[] = [];
  for (const o of objects) {
    const model = MODELS[`${o.apiVersion}/${o.kind}`];
    if (!model) {
      problems.push(`${idOf(o)}: no schema for ${o.apiVersion} ${o.kind}`);
      continue;
    }
    try {
      new model.Model(o as never).validate();
    } catch (err) {
      problems.push(`${idOf(o)}: ${(err as Error).message}`);
    }
  }
  return problems;
}

/**
 * Fields the API does not know. The schemas of kubernetes-models allow unknown fields (a
 * misspelt `readinesProbe` passes them and would be dropped, or refused, by the API server), so
 * every object is also type-checked by TypeScript against the models' types as an object
 * literal, where a field the type does not declare is an error at any depth.
 */
export function unknownFieldProblems(objects: K8sObject[]): string[] {
  // A file that exists only in memory, where the models' types resolve as they do for this one.
  const file = path.join(import.meta.dirname, '__objects__.ts');
  const entries: { object: K8sObject; text: string }[] = [];
  const imports = new Map<string, string>();
  objects.forEach((o, i) => {
    const model = MODELS[`${o.apiVersion}/${o.kind}`];
    if (!model) return;
    const type = `I${model.kind}`;
    imports.set(model.module, type);
    entries.push({
      object: o,
      text: `export const o${i}: ${type} = ${JSON.stringify(o, null, 1)};`,
    });
  });
  const header = [...imports].map(([m, t]) => `import type { ${t} } from '${m}';`);
  // The lines of each object in the source, to name the object of each diagnostic.
  let line = header.length;
  const spans = entries.map(({ object, text }) => {
    const from = line;
    line += text.split('\n').length;
    return { from, to: line, object };
  });
  const source = [...header, ...entries.map((e) => e.text)].join('\n');

  const ts = load('typescript') as typeof TypeScript;
  const options: TypeScript.CompilerOptions = {
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    types: [],
  };
  const host = ts.createCompilerHost(options);
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (name, version, ...rest) =>
    name === file
      ? ts.createSourceFile(name, source, version)
      : getSourceFile(name, version, ...rest);
  const fileExists = host.fileExists.bind(host);
  host.fileExists = (name) => name === file || fileExists(name);
  const program = ts.createProgram([file], options, host);
  const diagnostics = [
    ...program.getSyntacticDiagnostics(program.getSourceFile(file)),
    ...program.getSemanticDiagnostics(program.getSourceFile(file)),
  ];
  return diagnostics.map((d) => {
    const at =
      d.file && d.start !== undefined ? d.file.getLineAndCharacterOfPosition(d.start) : undefined;
    const object = at ? spans.find((s) => at.line >= s.from && at.line < s.to)?.object : undefined;
    const text = ts.flattenDiagnosticMessageText(d.messageText, ' ');
    return `${object ? idOf(object) : 'objects'}: ${text}`;
  });
}
