// snowmint for JavaScript and TypeScript.
//
// - `id.ts`: IDs as BigInt, and the one reader of decimal ID text.
// - `layout.ts`: the core's presets; `decode`, `encode` and `range`.
// - `text.ts`: the text families (ULID, UUID, ObjectId, KSUID, TID,
//   Misskey, TSID text).
// - `inspect.ts`: IDs found in any text, each read as every family,
//   ranked, as the core's inspector.
// - `time.ts`: RFC 3339 as the core writes and reads it.
// - `json.ts`: JSON that keeps named ID fields exact (a reviver, a
//   replacer, and `parseJSON`, exact on every engine).
// - `client.ts`, `nodes.ts`: the client of `snowmint serve`: failover,
//   prefetch with bounded staleness.
// - `errors.ts`: every error the package throws.

export { MAX_U64, MAX_SAFE, parseId } from "./id.js";
export {
  Decoded,
  PRESETS,
  PRESET_NAMES,
  decode,
  encode,
  formatId,
  layout,
  parseIdText,
  range,
  type DecodeOptions,
  type Encoding,
  type FieldValues,
  type IdRange,
  type Layout,
  type LayoutField,
  type LayoutRef,
  type Role,
  type Unit,
} from "./layout.js";
export {
  FUTURE_SLACK_MS,
  MAX_TEXT,
  MAX_TOKENS,
  MIN_DIGITS,
  TIMESTAMP_STYLES,
  TWITTER_FIRST_SNOWFLAKE,
  inspect,
  tokenJSON,
  type InspectOptions,
  type Plausibility,
  type Reading,
  type Token,
} from "./inspect.js";
export { TEXT_FAMILY_NAMES, decodeText, type FieldValue, type TextReading } from "./text.js";
export { formatMs, parseTime, type TimeInput } from "./time.js";
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
