export {
  OpenApiSpec,
  type Operation,
  type PathParam,
  type ParamType,
  type SpecMatch,
} from './spec';
export { coerceParams, type ParamValue } from './params';
