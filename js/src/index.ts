// snowmint for JavaScript and TypeScript.
//
// - `id.ts`: IDs as BigInt, and the one reader of decimal ID text.
// - `json.ts`: JSON that keeps named ID fields exact (a reviver, a
//   replacer, and `parseJSON`, exact on every engine).
// - `client.ts`, `nodes.ts`: the client of `snowmint serve`: failover,
//   prefetch with bounded staleness.
// - `errors.ts`: every error the package throws.

export { MAX_U64, MAX_SAFE, parseId } from "./id.js";
export {
  DEFAULT_ID_FIELDS,
  hasSourceAccess,
  idReplacer,
  idReviver,
  parseJSON,
  stringifyJSON,
  type IdFields,
  type ParseOptions,
  type Replacer,
  type Reviver,
  type StringifyOptions,
} from "./json.js";
export {
  Client,
  MAX_BATCH,
  NODES_ENV,
  TOKEN_ENV,
  type ClientOptions,
  type PrefetchOptions,
  type Stats,
} from "./client.js";
export {
  ClientError,
  ConfigError,
  InvalidArgumentError,
  NodeError,
  RefusedError,
  SnowmintError,
  UnauthenticatedError,
  UnavailableError,
  type ErrorFacts,
  type ErrorKind,
} from "./errors.js";
