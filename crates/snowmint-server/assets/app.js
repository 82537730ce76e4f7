// The calculator page. Every number about an ID comes from the npm
// package (js/), through local.js, which answers as the node's /v1 API
// would: IDs stay strings here from end to end, and the page never does
// arithmetic on them (a JavaScript Number is exact only up to 2^53). Only
// new IDs come from a node: opened from disk (`snowmint page --export`)
// the page has none, and the Generate card says so.
//
// The page's scripts are one classic script, assets/page.js, bundled by
// esbuild (js/build-page.mjs), since a module does not run from file://.

import {
  currentZone, exploreText, readShared, renderExplore, setupExplore, writeShared,
} from './explore.js';
import { errorMessage, initialLanguage, t, translatePage } from './i18n.js';
import { LocalError, answer } from './local.js';

const $ = (id) => document.getElementById(id);

const state = {
  lang: 'en',
  layout: 'twitter',
  layoutInfo: null,
  layoutError: null,
  decoded: null,
  encoded: null,
  generated: null,
  // The encodings the text in the decode box reads in, when it is no ID
  // in the one chosen.
  readableAs: [],
  range: null,
  offline: null,
  // Errors shown next to inputs, by input id, as the API sent them.
  errors: new Map(),
};

// ---------------------------------------------------------------- the API

class ApiError extends Error {
  constructor(detail) {
    super(detail.message);
    this.detail = detail;
  }
}

/** Whether a node serves the page: not when it is opened from disk. */
const HAS_NODE = location.protocol !== 'file:';

async function api(path, params = {}) {
  // The calculator's answers are worked out here; only a node makes IDs.
  try {
    const local = answer(path, params);
    if (local) return local;
  } catch (error) {
    if (error instanceof LocalError) throw new ApiError(error.detail);
    throw error;
  }
  const query = new URLSearchParams(
    Object.entries(params).filter(([, value]) => value !== undefined && value !== ''),
  ).toString();
  let response;
  try {
    response = await fetch(query ? `${path}?${query}` : path, { headers: { Accept: 'application/json' } });
  } catch (cause) {
    throw new ApiError({ code: 'network', message: String(cause?.message ?? cause) });
  }
  if (state.offline) showOffline(null);
  let body = null;
  try {
    body = await response.json();
  } catch {
    // Handled below: no JSON is an answer the page cannot read.
  }
  if (response.ok && body) return body;
  throw new ApiError(body?.error ?? { code: 'answer', status: response.status, message: `HTTP ${response.status}` });
}

// Only the answer to the latest request of each kind is shown, however the
// answers arrive; `forget()` drops the one in flight too.
function latestOnly(run) {
  let latest = 0;
  const call = async (...args) => {
    const ticket = ++latest;
    const outcome = await run(...args).then((value) => ({ value }), (error) => ({ error }));
    if (ticket !== latest) return undefined;
    if (outcome.error) throw outcome.error;
    return outcome.value;
  };
  call.forget = () => { latest += 1; };
  return call;
}

function debounce(run, ms) {
  let timer;
  return (...args) => {
    clearTimeout(timer);
    timer = setTimeout(() => run(...args), ms);
  };
}

// ---------------------------------------------------------------- errors

function setError(inputId, detail) {
  if (detail) state.errors.set(inputId, detail);
  else state.errors.delete(inputId);
  renderError(inputId);
}

function renderError(inputId) {
  const detail = state.errors.get(inputId);
  const input = $(inputId);
  $(`${inputId}-error`).textContent = detail ? errorMessage(state.lang, detail) : '';
  if (detail) input.setAttribute('aria-invalid', 'true');
  else input.removeAttribute('aria-invalid');
}

// An API error goes next to the input of the parameter it names; one that
// names none (or one this form has no input for) goes next to `fallback`.
function showApiError(error, inputs, fallback) {
  if (!(error instanceof ApiError)) throw error;
  const detail = error.detail;
  if (detail.code === 'network') showOffline(detail);
  const target = inputs[detail.field] ?? fallback;
  for (const inputId of Object.values(inputs)) setError(inputId, inputId === target ? detail : null);
}

function clearErrors(inputs) {
  for (const inputId of Object.values(inputs)) setError(inputId, null);
}

function showOffline(detail) {
  state.offline = detail;
  renderOffline();
}

function renderOffline() {
  $('offline').hidden = !state.offline;
  $('offline').textContent = state.offline ? errorMessage(state.lang, state.offline) : '';
}

// ---------------------------------------------------------------- time

// In the time zone picked (the browser's unless another is).
function formatLocal(ms) {
  return new Intl.DateTimeFormat(state.lang, {
    year: 'numeric', month: 'short', day: 'numeric',
    hour: '2-digit', minute: '2-digit', second: '2-digit', fractionalSecondDigits: 3,
    hourCycle: 'h23', timeZoneName: 'short', timeZone: currentZone(),
  }).format(new Date(ms));
}

// A datetime-local input holds local wall-clock time without a zone.
function pickerToMs(value) {
  const ms = value ? new Date(value).getTime() : NaN;
  return Number.isFinite(ms) ? ms : null;
}

function msToPicker(ms) {
  const date = new Date(ms);
  const year = date.getFullYear();
  if (!(year >= 1 && year <= 9999)) return '';
  const two = (n) => String(n).padStart(2, '0');
  return `${String(year).padStart(4, '0')}-${two(date.getMonth() + 1)}-${two(date.getDate())}`
    + `T${two(date.getHours())}:${two(date.getMinutes())}:${two(date.getSeconds())}`
    + `.${String(date.getMilliseconds()).padStart(3, '0')}`;
}

// A picker and a text box for one instant: the picker writes Unix ms into
// the box; the box (what is sent) moves the picker once the API has read it.
function pairTime(pickerId, textId, onChange) {
  $(pickerId).addEventListener('input', () => {
    const ms = pickerToMs($(pickerId).value);
    if (ms === null) return;
    $(textId).value = String(ms);
    onChange();
  });
  $(textId).addEventListener('input', onChange);
}

function syncPicker(pickerId, ms) {
  if (document.activeElement !== $(pickerId)) $(pickerId).value = msToPicker(ms);
}

// ---------------------------------------------------------------- layout

const fetchLayout = latestOnly((layout) => api('/v1/layout', { layout }));

async function loadLayout() {
  try {
    state.layoutInfo = await fetchLayout(state.layout);
    state.layoutError = null;
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    state.layoutInfo = null;
    state.layoutError = error.detail;
  }
  renderLayout();
  renderDecode();
}

function renderLayout() {
  const info = state.layoutInfo;
  $('facts-error').textContent = state.layoutError ? errorMessage(state.lang, state.layoutError) : '';
  if (!info) return;
  const number = new Intl.NumberFormat(state.lang);
  $('facts-layout').textContent = `${info.layout} (${info.spec})`;
  $('facts-widths').textContent = [info.timestamp_bits, info.datacenter_bits, info.machine_bits, info.sequence_bits].join(' / ');
  $('facts-epoch').textContent = `${info.epoch} (${info.epoch_ms})`;
  $('facts-last').textContent = `${info.last_instant} (${info.last_instant_ms})`;
  $('facts-years-left').textContent = t(state.lang, 'facts.years', { years: number.format(info.years_left) });
  $('facts-ids-per-ms').textContent = number.format(info.ids_per_ms);
  $('facts-nodes').textContent = number.format(info.node_count);
  for (const field of ['datacenter', 'machine', 'sequence']) {
    $(`encode-${field}-hint`).textContent = t(state.lang, 'hint.range', { max: info[`max_${field}`] });
  }
}

// ---------------------------------------------------------------- decode

const DECODE_INPUTS = { id: 'decode-id' };
const fetchDecode = latestOnly((text, encoding, layout) =>
  api(`/v1/ids/${encodeURIComponent(text)}`, { encoding: encoding === 'decimal' ? undefined : encoding, layout }));

async function decode() {
  const text = $('decode-id').value.trim();
  state.readableAs = [];
  // Text no encoding of an ID can hold (a link, a mention, a sentence) is
  // for the readings below alone (explore.js), not an error here.
  if (!text || /[^0-9A-Za-z-]/.test(text)) {
    fetchDecode.forget();
    state.decoded = null;
    clearErrors(DECODE_INPUTS);
    renderDecode();
    return;
  }
  try {
    const answer = await fetchDecode(text, $('decode-encoding').value, state.layout);
    if (answer === undefined) return;
    state.decoded = answer;
    clearErrors(DECODE_INPUTS);
  } catch (error) {
    state.decoded = null;
    showApiError(error, DECODE_INPUTS, 'decode-id');
    // Text that is an ID in other encodings: offer the "Written in"
    // choice that reads it.
    if (error.detail?.field === 'id') state.readableAs = error.detail.readable_as ?? [];
  }
  renderDecode();
}

function renderSuggestions() {
  const box = $('decode-suggest');
  const encodings = state.decoded ? [] : state.readableAs;
  box.hidden = encodings.length === 0;
  const parts = encodings.flatMap((encoding) => {
    const name = t(state.lang, `encoding.${encoding}`);
    const button = document.createElement('button');
    button.type = 'button';
    button.className = 'suggestion';
    button.dataset.encoding = encoding;
    button.textContent = t(state.lang, 'decode.suggest_button', { encoding: name });
    return [' ', button];
  });
  const lead = encodings.length === 1
    ? t(state.lang, 'decode.suggest', { encoding: t(state.lang, `encoding.${encodings[0]}`) })
    : '';
  box.replaceChildren(lead, ...parts);
}

function renderDecode() {
  renderSuggestions();
  const answer = state.decoded;
  $('decode-result').hidden = !answer;
  if (!answer) return;
  $('decode-timestamp-ms').textContent = String(answer.timestamp_ms);
  $('decode-utc').textContent = answer.time;
  $('decode-local').textContent = formatLocal(answer.timestamp_ms);
  renderFields(answer);
  $('decode-decimal').textContent = answer.id;
  $('decode-hex').textContent = answer.encodings.hex;
  $('decode-base32').textContent = answer.encodings.base32;
  $('decode-base58').textContent = answer.encodings.base58;
  renderBits(answer);
}

// The fields Twitter's layout names keep their elements' ids
// (`decode-machine`); any other family's field is `decode-field-NAME`, so
// that no name a layout text gives can take the id of another output.
const CLASSIC_FIELDS = new Set(['datacenter', 'machine', 'sequence']);

/** A field's label: the page's word for the names it knows, else the
 * family's own name. */
function fieldLabel(name) {
  const key = `field.${name}`;
  const text = t(state.lang, key);
  return text === key ? name : text;
}

/** One row per field of the ID's family, by the family's names, most
 * significant first (the time has rows of its own). */
function renderFields(answer) {
  const facts = $('decode-result').querySelector('.facts');
  for (const old of facts.querySelectorAll('[data-family-field]')) old.remove();
  const before = $('decode-decimal').closest('div');
  for (const [name, value] of Object.entries(answer.fields ?? {})) {
    const row = document.createElement('div');
    row.dataset.familyField = name;
    const term = document.createElement('dt');
    term.textContent = fieldLabel(name);
    const output = document.createElement('output');
    output.id = CLASSIC_FIELDS.has(name) ? `decode-${name}` : `decode-field-${name}`;
    output.textContent = String(value);
    const description = document.createElement('dd');
    description.append(output);
    row.append(term, description);
    facts.insertBefore(row, before);
  }
}

// Hex digit -> its four bits: text to text, no arithmetic on the ID.
const NIBBLES = Object.fromEntries(
  [...'0123456789abcdef'].map((digit, i) => [digit, i.toString(2).padStart(4, '0')]),
);

function renderBits(answer) {
  const info = state.layoutInfo;
  const box = $('decode-bits');
  // The same picture is not drawn again: a reader (or a test) holding one
  // of its elements keeps it.
  const key = info ? `${answer.id} ${answer.layout} ${info.spec} ${state.lang}` : '';
  if (key && box.dataset.key === key) return;
  box.dataset.key = key;
  box.replaceChildren();
  if (!info || info.layout !== answer.layout) return;
  const bits = [...answer.encodings.hex.toLowerCase().padStart(16, '0')].map((digit) => NIBBLES[digit]).join('');
  // The layout's fields, most significant first, below the bits it
  // leaves unused (Twitter's sign bit; none in Discord's 64). Each is
  // coloured by its role: the lowest node field as Twitter's machine, the
  // node fields above it as its datacenter.
  const nodes = info.fields.filter((field) => field.role === 'node').map((field) => field.name);
  const tone = (field) => ({
    time: 'timestamp',
    sequence: 'sequence',
    node: field.name === nodes[nodes.length - 1] ? 'machine' : 'datacenter',
  })[field.role] ?? 'sign';
  const fields = info.fields.map((field) => [
    field.name,
    field.bits,
    field.role === 'time' ? answer.time : String(answer.fields?.[field.name] ?? ''),
    tone(field),
  ]);
  const used = info.fields.reduce((sum, field) => sum + field.bits, 0);
  if (used < 64) fields.unshift(['sign', 64 - used, '0', 'sign']);
  let at = 0;
  for (const [name, width, value, colour] of fields) {
    const part = document.createElement('div');
    part.className = `bit-field ${name} tone-${colour}`;
    part.dataset.field = name;
    const label = document.createElement('span');
    label.className = 'name';
    label.textContent = fieldLabel(name);
    const size = document.createElement('span');
    size.className = 'size';
    size.textContent = ` · ${width === 1 ? t(state.lang, 'bits.size_one') : t(state.lang, 'bits.size', { n: width })}`;
    const digits = document.createElement('span');
    digits.className = 'digits';
    digits.textContent = bits.slice(at, at + width);
    const shown = document.createElement('span');
    shown.className = 'value';
    shown.textContent = `= ${value}`;
    part.append(label, size, digits, shown);
    box.append(part);
    at += width;
  }
}

// ---------------------------------------------------------------- encode

const ENCODE_INPUTS = {
  timestamp: 'encode-timestamp',
  datacenter: 'encode-datacenter',
  machine: 'encode-machine',
  sequence: 'encode-sequence',
};
const fetchEncode = latestOnly((params) => api('/v1/encode', params));

async function encode() {
  const params = { layout: state.layout };
  for (const [name, inputId] of Object.entries(ENCODE_INPUTS)) params[name] = $(inputId).value.trim();
  try {
    const answer = await fetchEncode(params);
    if (answer === undefined) return;
    state.encoded = answer;
    clearErrors(ENCODE_INPUTS);
    syncPicker('encode-picker', answer.timestamp_ms);
  } catch (error) {
    state.encoded = null;
    showApiError(error, ENCODE_INPUTS, 'encode-timestamp');
  }
  renderEncode();
}

function renderEncode() {
  $('encode-result').hidden = !state.encoded;
  if (state.encoded) $('encode-id').textContent = state.encoded.id;
}

// ---------------------------------------------------------------- generate

const GENERATE_INPUTS = { count: 'generate-count' };

async function generate() {
  // Opened from disk: no node to ask (the card says so).
  if (!HAS_NODE) return;
  try {
    const count = $('generate-count').value.trim();
    const [ids, node] = await Promise.all([api('/v1/ids', { count }), api('/v1/node')]);
    state.generated = { ids: ids.ids, node };
    clearErrors(GENERATE_INPUTS);
  } catch (error) {
    state.generated = null;
    showApiError(error, GENERATE_INPUTS, 'generate-count');
  }
  renderGenerate();
}

function renderGenerate() {
  $('generate-nodeless').hidden = HAS_NODE;
  $('generate-form').querySelector('button[type=submit]').disabled = !HAS_NODE;
  const generated = state.generated;
  $('generate-result').hidden = !generated;
  $('generate-empty').hidden = Boolean(generated) || !HAS_NODE;
  if (!generated) return;
  const { node } = generated;
  $('generate-node').textContent = node.datacenter === null
    ? t(state.lang, 'generate.node_fenced', { reason: node.reason ?? '' })
    : t(state.lang, 'generate.node', node);
  const items = generated.ids.map((id) => {
    const item = document.createElement('li');
    const code = document.createElement('code');
    code.textContent = id;
    const button = document.createElement('button');
    button.type = 'button';
    button.className = 'copy';
    button.dataset.text = id;
    button.textContent = t(state.lang, 'copy');
    button.setAttribute('aria-label', t(state.lang, 'generate.copy_label', { id }));
    item.append(code, button);
    return item;
  });
  $('generate-list').replaceChildren(...items);
}

// ---------------------------------------------------------------- range

const RANGE_INPUTS = { from: 'range-from', to: 'range-to' };
const fetchRange = latestOnly((params) => api('/v1/range', params));

async function range() {
  try {
    const answer = await fetchRange({
      from: $('range-from').value.trim(),
      to: $('range-to').value.trim(),
      layout: state.layout,
    });
    if (answer === undefined) return;
    state.range = answer;
    clearErrors(RANGE_INPUTS);
    syncPicker('range-from-picker', answer.from_ms);
    syncPicker('range-to-picker', answer.to_ms);
  } catch (error) {
    state.range = null;
    showApiError(error, RANGE_INPUTS, 'range-from');
  }
  renderRange();
}

function renderRange() {
  $('range-result').hidden = !state.range;
  if (!state.range) return;
  $('range-min').textContent = state.range.min;
  $('range-max').textContent = state.range.max;
  $('range-sql').textContent = `WHERE id BETWEEN ${state.range.min} AND ${state.range.max}`;
}

// ---------------------------------------------------------------- copying

async function copy(button) {
  const text = button.dataset.text ?? $(button.dataset.copy).textContent;
  try {
    await navigator.clipboard.writeText(text);
  } catch {
    // Plain http on another host is not a secure context: no clipboard API.
    const scratch = document.createElement('textarea');
    scratch.value = text;
    scratch.setAttribute('readonly', '');
    scratch.style.position = 'fixed';
    scratch.style.opacity = '0';
    document.body.append(scratch);
    scratch.select();
    const copied = document.execCommand('copy');
    scratch.remove();
    button.focus();
    if (!copied) {
      $('status').textContent = t(state.lang, 'copy.failed');
      return;
    }
  }
  // The label comes back in the page's language (a button marked for
  // translation keeps its own words).
  const label = () => (button.dataset.i18n ? t(state.lang, button.dataset.i18n) : t(state.lang, 'copy'));
  button.textContent = t(state.lang, 'copied');
  $('status').textContent = t(state.lang, 'copy.done', { text });
  setTimeout(() => { button.textContent = label(); }, 1500);
}

// ---------------------------------------------------------------- settings

function remember(key, value) {
  try {
    localStorage.setItem(`snowmint.${key}`, value);
  } catch {
    // Storage may be off; the choice then lasts for this visit only.
  }
}

function recall(key) {
  try {
    return localStorage.getItem(`snowmint.${key}`);
  } catch {
    return null;
  }
}

function setLanguage(lang) {
  state.lang = lang;
  $('lang').value = lang;
  translatePage(lang);
  for (const inputId of state.errors.keys()) renderError(inputId);
  renderOffline();
  renderLayout();
  renderDecode();
  renderEncode();
  renderGenerate();
  renderRange();
  renderExplore();
  share();
}

// The page's state in its link, for sharing.
function share() {
  writeShared({ text: $('decode-id').value.trim(), layout: state.layout, lang: state.lang });
}

async function setLayout(layout) {
  state.layout = layout;
  $('layout').value = layout;
  await loadLayout();
  if ($('decode-id').value.trim()) decode();
  encode();
  range();
  share();
}

// ---------------------------------------------------------------- start

/** The layout of the node that serves the page (no layout asked for), or null from disk or when it does not say. */
async function nodeLayout() {
  if (!HAS_NODE) return null;
  try {
    const response = await fetch('/v1/layout', { headers: { Accept: 'application/json' } });
    const name = response.ok ? (await response.json()).layout : null;
    if (typeof name !== 'string' || !name) return null;
    // A layout that is no preset (a node's layout text) gets its own choice.
    if (![...$('layout').options].some((o) => o.value === name)) $('layout').add(new Option(name, name));
    return name;
  } catch {
    return null;
  }
}

function start() {
  // A shared link's state wins over what this browser remembers.
  const shared = readShared();
  setupExplore({
    lang: () => state.lang,
    layout: () => state.layout,
    changed: share,
  }, shared);
  setLanguage(initialLanguage(shared.lang ?? recall('lang')));
  const layout = shared.layout ?? recall('layout');
  state.layout = [...$('layout').options].some((o) => o.value === layout) ? layout : 'twitter';
  // Nothing chosen: the node's own layout, once it has said which.
  if (!layout) nodeLayout().then((name) => { if (name && state.layout === 'twitter') setLayout(name); });
  if (shared.text !== undefined) $('decode-id').value = shared.text;

  $('lang').addEventListener('change', () => {
    remember('lang', $('lang').value);
    setLanguage($('lang').value);
  });
  $('layout').addEventListener('change', () => {
    remember('layout', $('layout').value);
    setLayout($('layout').value);
  });

  const typing = (run) => debounce(run, 250);
  const decodeSoon = typing(decode);
  const exploreSoon = typing(() => { exploreText($('decode-id').value); share(); });
  $('decode-id').addEventListener('input', decodeSoon);
  $('decode-id').addEventListener('input', exploreSoon);
  $('zone').addEventListener('change', renderDecode);
  $('decode-encoding').addEventListener('change', decode);
  $('decode-form').addEventListener('submit', (event) => { event.preventDefault(); decode(); });
  $('decode-suggest').addEventListener('click', (event) => {
    const button = event.target.closest('button.suggestion');
    if (!button) return;
    $('decode-encoding').value = button.dataset.encoding;
    decode();
  });

  const encodeSoon = typing(encode);
  pairTime('encode-picker', 'encode-timestamp', encodeSoon);
  for (const field of ['datacenter', 'machine', 'sequence']) $(`encode-${field}`).addEventListener('input', encodeSoon);
  $('encode-form').addEventListener('submit', (event) => { event.preventDefault(); encode(); });

  $('generate-form').addEventListener('submit', (event) => { event.preventDefault(); generate(); });

  const rangeSoon = typing(range);
  pairTime('range-from-picker', 'range-from', rangeSoon);
  pairTime('range-to-picker', 'range-to', rangeSoon);
  $('range-form').addEventListener('submit', (event) => { event.preventDefault(); range(); });

  document.addEventListener('click', (event) => {
    const button = event.target.closest('button.copy');
    if (button) copy(button);
  });

  // Starting values: now, and the hour before it.
  const now = Date.now();
  $('encode-timestamp').value = String(now);
  $('range-from').value = String(now - 3_600_000);
  $('range-to').value = String(now);
  setLayout(state.layout);
  exploreText($('decode-id').value);
  $('share-link').addEventListener('click', share, { capture: true });
  // From disk there is no server whose API the footer could name.
  document.querySelector('footer').hidden = !HAS_NODE;
}

start();
