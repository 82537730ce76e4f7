// The page's views of pasted text: the readings of whatever is in the
// decode box, side by side with why; Discord's timestamp markup for the
// best one; a batch of up to 10,000 IDs as a sorted table with CSV; two IDs
// compared; the time zone; and the page's state in its link. What the
// text reads as comes from inspect.js (readText and its arithmetic).

import { errorMessage, t } from './i18n.js';
import {
  DISCORD_STYLE_FORMAT,
  MAX_TOKENS,
  ReadError,
  batchRows,
  bestReading,
  discordMarkups,
  durationParts,
  nsToMs,
  readText,
  relativeUnit,
  timeToNs,
  toCsv,
} from './inspect.js';

const $ = (id) => document.getElementById(id);

// What the page around these views tells them (set by `setupExplore`).
let page = { lang: () => 'en', layout: () => 'twitter', changed: () => {} };

const state = {
  zone: Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC',
  readings: null,
  readingsError: null,
  batch: null,
  batchError: null,
  compare: null,
  compareError: null,
};

// ---------------------------------------------------------------- zones

/** The time zone times are shown in besides UTC. */
export function currentZone() {
  return state.zone;
}

function zoneNames() {
  const names = typeof Intl.supportedValuesOf === 'function' ? Intl.supportedValuesOf('timeZone') : [];
  return ['UTC', ...names.filter((name) => name !== 'UTC')];
}

/** Picks `zone` if the browser knows it; says whether it did. */
export function setZone(zone) {
  try {
    new Intl.DateTimeFormat('en', { timeZone: zone });
  } catch {
    return false;
  }
  state.zone = zone;
  const select = $('zone');
  if (![...select.options].some((option) => option.value === zone)) select.add(new Option(zone, zone));
  select.value = zone;
  return true;
}

// Intl's formatters cost far more to make than to use: one per kind,
// language, zone and options, made once (a batch formats 10,000 times).
const formatters = new Map();
function formatter(Kind, lang, options) {
  const key = `${Kind.name} ${lang} ${JSON.stringify(options)}`;
  let made = formatters.get(key);
  if (!made) {
    made = new Kind(lang, options);
    formatters.set(key, made);
  }
  return made;
}

const LOCAL = {
  year: 'numeric', month: 'short', day: 'numeric',
  hour: '2-digit', minute: '2-digit', second: '2-digit', fractionalSecondDigits: 3,
  hourCycle: 'h23', timeZoneName: 'short',
};

/** An instant (ns) in the zone, to the millisecond, in the page's language. */
function inZone(ns, options = LOCAL) {
  try {
    return formatter(Intl.DateTimeFormat, page.lang(), { ...options, timeZone: state.zone }).format(new Date(nsToMs(ns)));
  } catch {
    return '';
  }
}

function relative(ns) {
  const now = BigInt(Date.now()) * 1_000_000n;
  const [unit, count] = relativeUnit(ns - now);
  return formatter(Intl.RelativeTimeFormat, page.lang(), { numeric: 'auto' }).format(count, unit);
}

/** A length of time (ns) in words: "3 days, 4 hours and 5.25 seconds". */
function duration(ns) {
  const lang = page.lang();
  const unitFormat = (unit) => formatter(Intl.NumberFormat, lang, { style: 'unit', unit, unitDisplay: 'long', maximumFractionDigits: 9 });
  const { parts, fraction } = durationParts(ns);
  const words = parts.map(([unit, count]) => {
    const value = unit === 'second' ? Number(count) + Number(fraction) / 1e9 : Number(count);
    return unitFormat(unit).format(value);
  });
  if (fraction > 0n && !parts.some(([unit]) => unit === 'second')) {
    words.push(unitFormat('second').format(Number(fraction) / 1e9));
  }
  if (words.length === 0) return t(lang, 'compare.no_time_between');
  return formatter(Intl.ListFormat, lang, { style: 'long', type: 'conjunction' }).format(words);
}

// ---------------------------------------------------------------- elements

function element(tag, className, text) {
  const made = document.createElement(tag);
  if (className) made.className = className;
  if (text !== undefined) made.textContent = text;
  return made;
}

const ESCAPES = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
function escapeHtml(text) {
  return String(text).replace(/[&<>"']/g, (c) => ESCAPES[c]);
}

function copyButton(text, label) {
  const button = element('button', 'copy', t(page.lang(), 'copy'));
  button.type = 'button';
  button.dataset.text = text;
  if (label) button.setAttribute('aria-label', label);
  return button;
}

function readError(error) {
  if (!(error instanceof ReadError)) throw error;
  return error.detail;
}

// ---------------------------------------------------------------- readings

/** Reads the decode box's text; only the latest answer is shown. */
let readingsTicket = 0;
export async function exploreText(text) {
  const ticket = ++readingsTicket;
  if (!text.trim()) {
    state.readings = null;
    state.readingsError = null;
    renderReadings();
    return;
  }
  let answer = null;
  let failure = null;
  try {
    answer = await readText(text);
  } catch (error) {
    failure = readError(error);
  }
  if (ticket !== readingsTicket) return;
  state.readings = answer;
  state.readingsError = failure;
  renderReadings();
}

function renderReading(reading) {
  const lang = page.lang();
  const card = element('article', 'reading');
  card.dataset.family = reading.family;
  card.dataset.plausibility = reading.plausibility;
  const head = element('header');
  head.append(element('h4', 'family', reading.family), element('span', 'badge', t(lang, `plausibility.${reading.plausibility}`)));
  card.append(head);
  const ns = timeToNs(reading.time);
  const facts = element('dl', 'facts');
  const fact = (label, value, className) => {
    const row = element('div');
    row.append(element('dt', '', label), element('dd', className, value));
    facts.append(row);
  };
  if (ns === null) {
    fact(t(lang, 'readings.time'), t(lang, 'readings.no_time'), 'time-utc');
  } else {
    fact('UTC', reading.time, 'time-utc');
    fact(state.zone, inZone(ns), 'time-zone');
    fact(t(lang, 'readings.relative'), relative(ns), 'time-relative');
  }
  // The family's fields, under its own names.
  const fixed = new Set(['family', 'time', 'plausibility', 'why']);
  for (const [name, value] of Object.entries(reading)) {
    if (!fixed.has(name)) fact(name, String(value), `field field-${name}`);
  }
  card.append(facts, element('p', 'why', reading.why));
  return card;
}

function renderReadings() {
  const lang = page.lang();
  const box = $('decode-readings');
  const answer = state.readings;
  $('decode-readings-error').textContent = state.readingsError ? errorMessage(lang, state.readingsError) : '';
  $('decode-readings-box').hidden = !answer || answer.tokens.length === 0;
  box.replaceChildren();
  if (answer) {
    for (const token of answer.tokens) {
      const section = element('section', 'token');
      section.dataset.input = token.input;
      const title = element('h3', '', token.input);
      if (token.context) title.append(' ', element('span', 'context', token.context));
      // The plausible readings side by side; the implausible ones (an
      // integer read as a family whose time it cannot be) folded below,
      // open when nothing else is left.
      const likely = token.candidates.filter((r) => r.plausibility !== 'implausible');
      const unlikely = token.candidates.filter((r) => r.plausibility === 'implausible');
      const row = element('div', 'reading-row');
      row.append(...likely.map(renderReading));
      section.append(title, row);
      if (unlikely.length) {
        const more = element('details', 'implausible');
        more.open = likely.length === 0;
        const rest = element('div', 'reading-row');
        rest.append(...unlikely.map(renderReading));
        more.append(element('summary', '', t(lang, 'readings.implausible', { count: unlikely.length })), rest);
        section.append(more);
      }
      box.append(section);
    }
  }
  renderMarkup();
}

// The markup of the best reading with a time of the first token that has
// one: a pasted message link shows its message's (the last token's).
function markupTime() {
  const tokens = state.readings?.tokens ?? [];
  for (const token of [...tokens].reverse()) {
    const reading = bestReading(token);
    const ns = timeToNs(reading?.time);
    if (ns !== null) return { ns, input: token.input };
  }
  return null;
}

function renderMarkup() {
  const lang = page.lang();
  const box = $('decode-markup');
  const chosen = markupTime();
  box.hidden = !chosen;
  const body = $('decode-markup-rows');
  body.replaceChildren();
  if (!chosen) return;
  $('decode-markup-of').textContent = t(lang, 'markup.of', { input: chosen.input });
  for (const { style, markup } of discordMarkups(chosen.ns)) {
    const row = element('li');
    row.dataset.style = style;
    const preview = style === 'R' ? relative(chosen.ns) : inZone(chosen.ns, DISCORD_STYLE_FORMAT[style]);
    row.append(
      element('span', 'style-name', t(lang, `markup.style.${style}`)),
      element('code', 'markup', markup),
      element('span', 'preview', preview),
      copyButton(markup, t(lang, 'markup.copy_label', { markup })),
    );
    body.append(row);
  }
}

// ---------------------------------------------------------------- batch

async function readBatch() {
  const text = $('batch-text').value;
  state.batch = null;
  state.batchError = null;
  $('batch-status').textContent = t(page.lang(), 'batch.reading');
  try {
    // The table shows each token's best reading: ask for that alone.
    const answer = await readText(text, { top: 1 });
    state.batch = { rows: batchRows(answer.tokens), tokens: answer.tokens.length };
  } catch (error) {
    state.batchError = readError(error);
  }
  renderBatch();
}

function formatDelta(ns) {
  if (ns === null) return '';
  return duration(ns);
}

function renderBatch() {
  const lang = page.lang();
  const batch = state.batch;
  $('batch-max').textContent = t(lang, 'batch.max', { max: new Intl.NumberFormat(lang).format(MAX_TOKENS) });
  $('batch-error').textContent = state.batchError ? errorMessage(lang, state.batchError) : '';
  $('batch-result').hidden = !batch;
  const link = $('batch-csv');
  if (link.href.startsWith('blob:')) URL.revokeObjectURL(link.href);
  link.removeAttribute('href');
  if (!batch) {
    $('batch-status').textContent = '';
    return;
  }
  const timed = batch.rows.filter((row) => row.ns !== null).length;
  $('batch-status').textContent = t(lang, 'batch.summary', {
    count: new Intl.NumberFormat(lang).format(batch.tokens),
    timed: new Intl.NumberFormat(lang).format(timed),
  });
  // Ten thousand rows as one piece of HTML: the browser's parser builds
  // them several times faster than as many createElement calls. Every
  // value is escaped.
  const noTime = escapeHtml(t(lang, 'readings.no_time'));
  const html = batch.rows.map((row, at) => {
    const input = escapeHtml(row.input);
    return `<tr data-input="${input}"><td class="number">${at + 1}</td>`
      + `<td class="input"><code>${input}</code></td>`
      + `<td class="family">${escapeHtml(row.family ?? '')}</td>`
      + `<td class="time-utc">${row.time ? escapeHtml(row.time) : noTime}</td>`
      + `<td class="time-zone">${row.ns === null ? '' : escapeHtml(inZone(row.ns))}</td>`
      + `<td class="delta">${escapeHtml(formatDelta(row.delta))}</td></tr>`;
  });
  $('batch-rows').innerHTML = html.join('');
  const blob = new Blob([toCsv(batch.rows)], { type: 'text/csv;charset=utf-8' });
  link.href = URL.createObjectURL(blob);
}

// ---------------------------------------------------------------- compare

let compareTicket = 0;
async function compare() {
  const ticket = ++compareTicket;
  const a = $('compare-a').value.trim();
  const b = $('compare-b').value.trim();
  if (!a || !b) {
    state.compare = null;
    state.compareError = null;
    renderCompare();
    page.changed();
    return;
  }
  let result = null;
  let failure = null;
  try {
    const [first, second] = await Promise.all([readText(a), readText(b)]);
    const side = (answer) => {
      const token = answer.tokens[0];
      const reading = token && bestReading(token);
      return { input: token?.input ?? null, reading, ns: timeToNs(reading?.time) };
    };
    result = { a: side(first), b: side(second) };
  } catch (error) {
    failure = readError(error);
  }
  if (ticket !== compareTicket) return;
  state.compare = result;
  state.compareError = failure;
  renderCompare();
  page.changed();
}

function renderCompare() {
  const lang = page.lang();
  const result = state.compare;
  $('compare-error').textContent = state.compareError ? errorMessage(lang, state.compareError) : '';
  $('compare-result').hidden = !result;
  if (!result) return;
  for (const [key, side] of [['a', result.a], ['b', result.b]]) {
    $(`compare-${key}-read`).textContent = side.ns === null
      ? t(lang, side.input ? 'compare.no_time' : 'compare.no_id')
      : t(lang, 'compare.read', { family: side.reading.family, time: side.reading.time });
  }
  const verdict = $('compare-verdict');
  const exact = $('compare-exact');
  if (result.a.ns === null || result.b.ns === null) {
    verdict.textContent = t(lang, 'compare.cannot');
    exact.textContent = '';
    return;
  }
  const difference = result.b.ns - result.a.ns;
  verdict.dataset.older = difference > 0n ? 'a' : difference < 0n ? 'b' : 'same';
  verdict.textContent = difference === 0n
    ? t(lang, 'compare.same')
    : t(lang, difference > 0n ? 'compare.a_older' : 'compare.b_older', { duration: duration(difference) });
  const absolute = difference < 0n ? -difference : difference;
  exact.textContent = t(lang, 'compare.exact', {
    ms: new Intl.NumberFormat(lang).format(absolute / 1_000_000n),
    ns: new Intl.NumberFormat(lang).format(absolute),
  });
}

// ---------------------------------------------------------------- the link

/** What a shared link holds: the decode box, the layout, zone, language and the two compared IDs. */
export function readShared() {
  const params = new URLSearchParams(location.hash.slice(1));
  const value = (name) => params.get(name) ?? undefined;
  return { text: value('text'), layout: value('layout'), zone: value('tz'), lang: value('lang'), a: value('a'), b: value('b') };
}

/** Writes the page's state into its link (no new history entry). */
export function writeShared({ text, layout, lang }) {
  const params = new URLSearchParams();
  if (text) params.set('text', text);
  params.set('layout', layout);
  params.set('tz', state.zone);
  params.set('lang', lang);
  const a = $('compare-a').value.trim();
  const b = $('compare-b').value.trim();
  if (a) params.set('a', a);
  if (b) params.set('b', b);
  history.replaceState(null, '', `#${params}`);
  $('share-link').dataset.text = location.href;
}

// ---------------------------------------------------------------- set-up

/** Re-renders every view, in the page's language. */
export function renderExplore() {
  renderReadings();
  renderBatch();
  renderCompare();
}

/**
 * Wires the views: `context` gives the page's language and layout, and
 * `changed()` is called when something the link holds changes here.
 */
export function setupExplore(context, shared = {}) {
  page = context;
  const select = $('zone');
  select.replaceChildren(...zoneNames().map((name) => new Option(name, name)));
  if (!(shared.zone && setZone(shared.zone))) setZone(state.zone);
  select.addEventListener('change', () => {
    setZone(select.value);
    renderExplore();
    page.changed();
  });
  $('batch-form').addEventListener('submit', (event) => { event.preventDefault(); readBatch(); });
  let timer;
  const compareSoon = () => { clearTimeout(timer); timer = setTimeout(compare, 250); };
  $('compare-a').addEventListener('input', compareSoon);
  $('compare-b').addEventListener('input', compareSoon);
  $('compare-form').addEventListener('submit', (event) => { event.preventDefault(); compare(); });
  if (shared.a) $('compare-a').value = shared.a;
  if (shared.b) $('compare-b').value = shared.b;
  if (shared.a && shared.b) compare();
}
