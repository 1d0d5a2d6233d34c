import { createRequire } from 'node:module';
import path from 'node:path';
import type * as TypeScript from 'typescript';
import { idOf, type K8sObject } from './objects.js';

// The Kubernetes API schemas, offline: kubernetes-models' classes for the OpenAPI schema of
// each kind, and its TypeScript types for the fields the API does not know. Both are loaded
// when first used (the TypeScript compiler is large).

const load = createRequire(import.meta.filename);

/** kubernetes-models' class and TypeScript type for each kind the manifests use. */
const MODELS: Record<string, { module: string; kind: string }> = {
  'v1/Namespace': { module: 'kubernetes-models/v1/Namespace', kind: 'Namespace' },
  'v1/ConfigMap': { module: 'kubernetes-models/v1/ConfigMap', kind: 'ConfigMap' },
  'v1/Secret': { module: 'kubernetes-models/v1/Secret', kind: 'Secret' },
  'v1/Service': { module: 'kubernetes-models/v1/Service', kind: 'Service' },
  'apps/v1/Deployment': { module: 'kubernetes-models/apps/v1/Deployment', kind: 'Deployment' },
  'apps/v1/StatefulSet': { module: 'kubernetes-models/apps/v1/StatefulSet', kind: 'StatefulSet' },
  'policy/v1/PodDisruptionBudget': {
    module: 'kubernetes-models/policy/v1/PodDisruptionBudget',
    kind: 'PodDisruptionBudget',
  },
  'networking.k8s.io/v1/NetworkPolicy': {
    module: 'kubernetes-models/networking.k8s.io/v1/NetworkPolicy',
    kind: 'NetworkPolicy',
  },
  'autoscaling/v2/HorizontalPodAutoscaler': {
    module: 'kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler',
    kind: 'HorizontalPodAutoscaler',
  },
};

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
    const Model = (load(model.module) as Record<string, new (data: unknown) => Validatable>)[
      model.kind
    ];
    try {
      new Model(o).validate();
    } catch (err) {
      problems.push(`${idOf(o)}: ${(err as Error).message}`);
    }
  }
  return problems;
}
interface Validatable {
  validate(): void;
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
    module: ts.ModuleKind.CommonJS,
    moduleResolution: ts.ModuleResolutionKind.Node10,
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
