// Words of the page in English and Spanish, and the translation of API errors.
//
// The API writes its messages in English; in English the page shows them as
// they are. In Spanish it rebuilds them from the structured error: `code`,
// `field` and the `value`, `min` and `max` the API sends with it.

export const LANGUAGES = ['en', 'es'];

const en = {
  'page.title': 'snowmint: Snowflake ID calculator',
  'page.tagline': 'Snowflake ID calculator',
  'page.skip': 'Skip to the calculator',
  'page.noscript': 'This page needs JavaScript. The same answers are in the JSON API under /v1 (see /openapi.json).',
  'settings.layout': 'Layout',
  'settings.language': 'Language',
  'decode.title': 'Decode an ID',
  'decode.lead': 'Paste an ID, a link, a mention or any text to see when and where its IDs were made.',
  'decode.id': 'ID',
  'decode.encoding': 'Written in',
  'decode.submit': 'Decode',
  'decode.timestamp_ms': 'Timestamp (Unix ms)',
  'decode.utc': 'UTC',
  'decode.local': 'Local time',
  'decode.decimal': 'Decimal',
  'decode.bits': 'The 64 bits of the ID, field by field (bits above the fields are 0)',
  'encoding.decimal': 'decimal',
  'encoding.hex': 'hex',
  'encoding.base32': 'base32',
  'encoding.base58': 'base58',
  'field.sign': 'Sign',
  'field.timestamp': 'Timestamp',
  'field.datacenter': 'Datacenter',
  'field.machine': 'Machine',
  'field.sequence': 'Sequence',
  'bits.size': '{n} bits',
  'bits.size_one': '1 bit',
  'encode.title': 'Build an ID',
  'encode.lead': 'Pick a time and a node; the ID is worked out as you type.',
  'encode.submit': 'Build',
  'encode.id': 'ID',
  'time.picker': 'Date and time (your local time)',
  'time.text': 'Time (Unix ms or RFC 3339)',
  'hint.range': '0 to {max}',
  'copy': 'Copy',
  'copied': 'Copied',
  'copy.failed': 'Could not copy; select the text and copy it by hand.',
  'copy.done': '{text} copied to the clipboard',
  'generate.title': 'New IDs from this node',
  'generate.count': 'How many',
  'generate.submit': 'Generate',
  'generate.node': 'Made by this node: datacenter {datacenter}, machine {machine} (slot {slot}, layout {layout}).',
  'generate.node_fenced': 'This node holds no slot now: {reason}',
  'generate.copy_label': 'Copy ID {id}',
  'generate.empty': 'Generate asks this node for that many new IDs, each one handed out once and never again, and shows them here with the node that made them.',
  'generate.needs_node': 'New IDs come from a node, and this page was opened from disk: open it on a node (snowmint serve) to generate IDs. Everything else on the page works here.',
  'decode.suggest': 'It reads as {encoding}:',
  'decode.suggest_button': 'Read it as {encoding}',
  'range.title': 'IDs of a time window',
  'range.lead': 'The smallest and largest ID made between two instants, for a database query.',
  'range.from_picker': 'From (your local time)',
  'range.from': 'From (Unix ms or RFC 3339)',
  'range.to_picker': 'To (your local time)',
  'range.to': 'To (Unix ms or RFC 3339)',
  'range.submit': 'Find the IDs',
  'range.min': 'Smallest ID',
  'range.max': 'Largest ID',
  'facts.title': 'The layout',
  'facts.layout': 'Layout',
  'facts.widths': 'Bits (timestamp / datacenter / machine / sequence)',
  'facts.epoch': 'Epoch',
  'facts.last': 'Last instant',
  'facts.years_left': 'Years left',
  'facts.years': '{years} years',
  'facts.ids_per_ms': 'IDs per millisecond per node',
  'facts.nodes': 'Nodes',
  'footer.api': "The same answers, and new IDs, from this server's JSON API:",
  'error.network': 'The server could not be reached ({detail}).',
  'error.answer': 'The server gave an answer this page cannot read (HTTP {status}).',
  'settings.zone': 'Time zone',
  'share.copy': 'Copy a link to this view',
  'readings.title': 'What the text reads as, most plausible first',
  'readings.time': 'Time',
  'readings.no_time': 'no time in it',
  'readings.relative': 'Relative',
  'readings.implausible': 'Implausible readings ({count}): times before the family began or in the future',
  'plausibility.pinned': 'pinned',
  'plausibility.plausible': 'plausible',
  'plausibility.implausible': 'implausible',
  'markup.title': 'Discord timestamp markup',
  'markup.of': 'The time of {input}, in every style Discord shows, in your zone and language:',
  'markup.copy_label': 'Copy {markup}',
  'markup.style.t': 'Short time',
  'markup.style.T': 'Long time',
  'markup.style.d': 'Short date',
  'markup.style.D': 'Long date',
  'markup.style.f': 'Date and time',
  'markup.style.F': 'Weekday, date and time',
  'markup.style.s': 'Short date and time',
  'markup.style.S': 'Short date, long time',
  'markup.style.R': 'Relative',
  'batch.title': 'Many IDs at once',
  'batch.lead': 'Paste IDs or lines of text; every ID is read and sorted by time, with the time between neighbours.',
  'batch.text': 'IDs or text',
  'batch.max': 'Up to {max} IDs and 1 MiB of text.',
  'batch.submit': 'Read them all',
  'batch.reading': 'Reading…',
  'batch.summary': '{count} IDs found, {timed} with a time; sorted by time.',
  'batch.csv': 'Download as CSV',
  'batch.input': 'ID',
  'batch.family': 'Family',
  'batch.zone': 'In the chosen zone',
  'batch.delta': 'Since the one before',
  'compare.title': 'Compare two IDs',
  'compare.lead': 'Which was made first, and how long before the other.',
  'compare.a': 'First ID',
  'compare.b': 'Second ID',
  'compare.submit': 'Compare',
  'compare.read': 'Read as {family}: {time}',
  'compare.no_time': 'Found, but it holds no time.',
  'compare.no_id': 'No ID found in it.',
  'compare.cannot': 'Both need a time to be compared.',
  'compare.same': 'Both were made at the same instant.',
  'compare.a_older': 'The first is older, by {duration}.',
  'compare.b_older': 'The second is older, by {duration}.',
  'compare.exact': 'Exactly {ms} ms ({ns} ns).',
  'compare.no_time_between': 'no time at all',
};

const es = {
  'page.title': 'snowmint: calculadora de IDs Snowflake',
  'page.tagline': 'Calculadora de IDs Snowflake',
  'page.skip': 'Ir a la calculadora',
  'page.noscript': 'Esta página necesita JavaScript. Las mismas respuestas están en la API JSON bajo /v1 (vea /openapi.json).',
  'settings.layout': 'Formato',
  'settings.language': 'Idioma',
  'decode.title': 'Descifrar un ID',
  'decode.lead': 'Pegue un ID, un enlace, una mención o cualquier texto para ver cuándo y dónde se crearon sus IDs.',
  'decode.id': 'ID',
  'decode.encoding': 'Escrito en',
  'decode.submit': 'Descifrar',
  'decode.timestamp_ms': 'Marca de tiempo (ms Unix)',
  'decode.utc': 'UTC',
  'decode.local': 'Hora local',
  'decode.decimal': 'Decimal',
  'decode.bits': 'Los 64 bits del ID, campo por campo (los bits sobre los campos son 0)',
  'encoding.decimal': 'decimal',
  'encoding.hex': 'hexadecimal',
  'encoding.base32': 'base32',
  'encoding.base58': 'base58',
  'field.sign': 'Signo',
  'field.timestamp': 'Marca de tiempo',
  'field.datacenter': 'Centro de datos',
  'field.machine': 'Máquina',
  'field.sequence': 'Secuencia',
  'bits.size': '{n} bits',
  'bits.size_one': '1 bit',
  'encode.title': 'Construir un ID',
  'encode.lead': 'Elija un instante y un nodo; el ID se calcula mientras escribe.',
  'encode.submit': 'Construir',
  'encode.id': 'ID',
  'time.picker': 'Fecha y hora (su hora local)',
  'time.text': 'Instante (ms Unix o RFC 3339)',
  'hint.range': 'de 0 a {max}',
  'copy': 'Copiar',
  'copied': 'Copiado',
  'copy.failed': 'No se pudo copiar; seleccione el texto y cópielo a mano.',
  'copy.done': '{text} copiado al portapapeles',
  'generate.title': 'IDs nuevos de este nodo',
  'generate.count': 'Cuántos',
  'generate.submit': 'Generar',
  'generate.node': 'Creados por este nodo: centro de datos {datacenter}, máquina {machine} (ranura {slot}, formato {layout}).',
  'generate.node_fenced': 'Este nodo no tiene ranura ahora y no emite IDs.',
  'generate.copy_label': 'Copiar el ID {id}',
  'generate.empty': 'Generar pide a este nodo esa cantidad de IDs nuevos, cada uno entregado una sola vez, y los muestra aquí con el nodo que los creó.',
  'generate.needs_node': 'Los IDs nuevos los crea un nodo, y esta página se abrió desde el disco: ábrala en un nodo (snowmint serve) para generar IDs. Todo lo demás de la página funciona aquí.',
  'decode.suggest': 'Se lee en {encoding}:',
  'decode.suggest_button': 'Leerlo en {encoding}',
  'range.title': 'IDs de una ventana de tiempo',
  'range.lead': 'El ID más pequeño y el más grande creados entre dos instantes, para una consulta a la base de datos.',
  'range.from_picker': 'Desde (su hora local)',
  'range.from': 'Desde (ms Unix o RFC 3339)',
  'range.to_picker': 'Hasta (su hora local)',
  'range.to': 'Hasta (ms Unix o RFC 3339)',
  'range.submit': 'Buscar los IDs',
  'range.min': 'ID más pequeño',
  'range.max': 'ID más grande',
  'facts.title': 'El formato',
  'facts.layout': 'Formato',
  'facts.widths': 'Bits (marca de tiempo / centro de datos / máquina / secuencia)',
  'facts.epoch': 'Época',
  'facts.last': 'Último instante',
  'facts.years_left': 'Años restantes',
  'facts.years': '{years} años',
  'facts.ids_per_ms': 'IDs por milisegundo y nodo',
  'facts.nodes': 'Nodos',
  'footer.api': 'Las mismas respuestas, e IDs nuevos, en la API JSON de este servidor:',
  'error.network': 'No se pudo contactar con el servidor.',
  'error.answer': 'El servidor dio una respuesta que esta página no puede leer (HTTP {status}).',
  'settings.zone': 'Zona horaria',
  'share.copy': 'Copiar un enlace a esta vista',
  'readings.title': 'Qué es el texto, lo más verosímil primero',
  'readings.time': 'Instante',
  'readings.no_time': 'no lleva instante',
  'readings.relative': 'Relativo',
  'readings.implausible': 'Lecturas inverosímiles ({count}): instantes anteriores al origen de la familia o futuros',
  'plausibility.pinned': 'fijado',
  'plausibility.plausible': 'verosímil',
  'plausibility.implausible': 'inverosímil',
  'markup.title': 'Marcas de tiempo de Discord',
  'markup.of': 'El instante de {input}, en cada estilo que muestra Discord, en su zona e idioma:',
  'markup.copy_label': 'Copiar {markup}',
  'markup.style.t': 'Hora corta',
  'markup.style.T': 'Hora larga',
  'markup.style.d': 'Fecha corta',
  'markup.style.D': 'Fecha larga',
  'markup.style.f': 'Fecha y hora',
  'markup.style.F': 'Día de la semana, fecha y hora',
  'markup.style.s': 'Fecha y hora cortas',
  'markup.style.S': 'Fecha corta, hora larga',
  'markup.style.R': 'Relativa',
  'batch.title': 'Muchos IDs a la vez',
  'batch.lead': 'Pegue IDs o líneas de texto; cada ID se lee y se ordena por instante, con el tiempo entre vecinos.',
  'batch.text': 'IDs o texto',
  'batch.max': 'Hasta {max} IDs y 1 MiB de texto.',
  'batch.submit': 'Leerlos todos',
  'batch.reading': 'Leyendo…',
  'batch.summary': '{count} IDs encontrados, {timed} con instante; ordenados por instante.',
  'batch.csv': 'Descargar como CSV',
  'batch.input': 'ID',
  'batch.family': 'Familia',
  'batch.zone': 'En la zona elegida',
  'batch.delta': 'Desde el anterior',
  'compare.title': 'Comparar dos IDs',
  'compare.lead': 'Cuál se creó antes, y cuánto antes que el otro.',
  'compare.a': 'Primer ID',
  'compare.b': 'Segundo ID',
  'compare.submit': 'Comparar',
  'compare.read': 'Leído como {family}: {time}',
  'compare.no_time': 'Encontrado, pero no lleva instante.',
  'compare.no_id': 'No contiene ningún ID.',
  'compare.cannot': 'Los dos necesitan un instante para compararlos.',
  'compare.same': 'Los dos se crearon en el mismo instante.',
  'compare.a_older': 'El primero es más antiguo, por {duration}.',
  'compare.b_older': 'El segundo es más antiguo, por {duration}.',
  'compare.exact': 'Exactamente {ms} ms ({ns} ns).',
  'compare.no_time_between': 'ningún tiempo',
};

const WORDS = { en, es };

// How the API's parameter names read in a Spanish sentence.
const FIELD_NAMES_ES = {
  id: 'ID',
  encoding: 'Codificación',
  timestamp: 'Marca de tiempo',
  datacenter: 'Centro de datos',
  machine: 'Máquina',
  sequence: 'Secuencia',
  count: 'Cantidad',
  from: 'Desde',
  to: 'Hasta',
  layout: 'Formato',
  epoch: 'Época',
  text: 'Texto',
  now: 'Ahora',
};

const TIME_FIELDS = new Set(['timestamp', 'from', 'to']);
const TIME_EXPECTED_ES =
  'se esperan milisegundos Unix como 1700000000000, o RFC 3339 como 2023-11-14T22:13:20.000Z';

// Spanish messages by error code. Each gets the error and returns the text,
// or null when the error lacks what the sentence needs.
const ERRORS_ES = {
  out_of_range: (e, f) => has(e, 'value', 'min', 'max')
    && `${f}: ${e.value} está fuera del rango (${e.min}..=${e.max})`,
  invalid_parameter: (e, f) => {
    if (TIME_FIELDS.has(e.field) && has(e, 'value')) {
      return `${f}: «${e.value}» no es un instante válido (${TIME_EXPECTED_ES})`;
    }
    if (e.field === 'id' && has(e, 'value', 'min', 'max')) {
      return `El ID «${e.value}» no es un entero válido (se espera un entero en ${e.min}..=${e.max})`;
    }
    if (has(e, 'value', 'min', 'max')) {
      return `${f}: «${e.value}» no es un número (se espera un entero en ${e.min}..=${e.max})`;
    }
    return has(e, 'value') && `${f}: el valor «${e.value}» no es válido`;
  },
  missing_parameter: (e, f) => `Falta ${f.toLowerCase()}` + (has(e, 'min', 'max') ? ` (un entero en ${e.min}..=${e.max}).` : '.'),
  empty_window: (e) => has(e, 'value', 'max')
    && `La ventana de tiempo está vacía: el inicio ${e.value} es posterior al fin ${e.max}.`,
  invalid_layout: (e) => `Formato de ID no válido: «${e.value ?? ''}».`,
  no_claim: (e) => `Este nodo no tiene ranura (centro de datos y máquina) y no puede emitir IDs ahora.${retry(e)}`,
  clock_behind: (e) => `El reloj de este nodo ha retrocedido; no emitirá IDs hasta que lo recupere.${retry(e)}`,
  mark_unwritable: (e) => `Este nodo no puede guardar su marca de agua y no emite IDs ahora.${retry(e)}`,
  not_ready: (e) => `Este nodo aún no está listo para emitir IDs.${retry(e)}`,
  clock_out_of_range: (e) => `El reloj de este nodo está fuera de lo que el formato puede representar.${retry(e)}`,
  payload_too_large: () => 'El texto es demasiado largo: envíe como mucho 1 MiB.',
  timeout: (e) => `La petición tardó demasiado.${retry(e)}`,
  unauthenticated: () => 'Este nodo pide un token (Authorization: Bearer) para emitir IDs, y esta página no lo envía.',
  network: () => WORDS.es['error.network'],
  answer: (e) => WORDS.es['error.answer'].replace('{status}', e.status),
};

function has(error, ...keys) {
  return keys.every((key) => error[key] !== undefined && error[key] !== null);
}

function retry(error) {
  return has(error, 'retry_after_s') ? ` Vuelva a intentarlo en ${error.retry_after_s} s.` : '';
}

/** The language to start in: the one remembered, else the browser's. */
export function initialLanguage(remembered) {
  if (LANGUAGES.includes(remembered)) return remembered;
  for (const tag of navigator.languages ?? [navigator.language]) {
    const base = String(tag).toLowerCase().split('-')[0];
    if (LANGUAGES.includes(base)) return base;
  }
  return 'en';
}

/** The text of `key` in `lang`, with `{name}` holes filled from `params`. */
export function t(lang, key, params = {}) {
  const text = WORDS[lang]?.[key] ?? en[key] ?? key;
  return text.replace(/\{(\w+)\}/g, (hole, name) => (name in params ? String(params[name]) : hole));
}

/** Puts the words of `lang` into every element marked with `data-i18n`. */
export function translatePage(lang, root = document) {
  document.documentElement.lang = lang;
  for (const element of root.querySelectorAll('[data-i18n]')) {
    element.textContent = t(lang, element.dataset.i18n);
  }
  document.title = t(lang, 'page.title');
}

/**
 * The message of an API error in `lang`. Errors the page makes itself
 * (`network`, `answer`) have English text built here too.
 */
export function errorMessage(lang, error) {
  if (lang === 'es') {
    const build = ERRORS_ES[error.code];
    const field = FIELD_NAMES_ES[error.field] ?? error.field ?? '';
    const text = build?.(error, field);
    if (text) return text;
    return `El servidor rechazó la petición (${error.code}).`;
  }
  if (error.code === 'network') return t('en', 'error.network', { detail: error.message });
  if (error.code === 'answer') return t('en', 'error.answer', { status: error.status });
  return error.message;
}
